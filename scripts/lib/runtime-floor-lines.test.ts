import t from 'tap';
import { parseRuntimeFloorChildren, RUNTIME_READY_RE } from './runtime-floor-lines.ts';

// A runtime floor's console as a guest printed it (bench:boot, 256 MiB, icount), children in the order they spoke.
const CONSOLE = [
  'RUNTIME READY uptime=1.582s',
  'RUNTIME CHILD alone uptime=1.728s spawned=1.596s',
  'RUNTIME CHILD wave-1 uptime=2.351s spawned=1.757s',
  'RUNTIME CHILD wave-3 uptime=2.360s spawned=1.768s',
  'RUNTIME CHILD wave-2 uptime=2.378s spawned=1.760s',
  'RUNTIME CHILD wave-5 uptime=2.371s spawned=1.780s',
  'RUNTIME CHILD wave-4 uptime=2.365s spawned=1.772s',
  'RUNTIME IDLE processes=6 used=99532KiB uptime=4.401s',
].join('\n');

t.test('the children: one alone, the last of five, their spawn, memory with the five idle', async (t) => {
  t.equal(RUNTIME_READY_RE.exec(CONSOLE)?.[1], '1.582');
  t.same(parseRuntimeFloorChildren(CONSOLE),
    { alone: 1.728, lastOfFive: 2.378, fiveSpawned: 1.757, idleUsedKiB: 99532 });
});

t.test('a console without every line is refused, naming what it saw', async (t) => {
  const lines = CONSOLE.split('\n');
  t.throws(() => parseRuntimeFloorChildren(lines.filter((l) => !l.includes('wave-4')).join('\n')),
    /five of the wave .*saw 5 child lines/);
  t.throws(() => parseRuntimeFloorChildren(lines.filter((l) => !l.includes('alone')).join('\n')), /spawned alone/);
  t.throws(() => parseRuntimeFloorChildren(lines.filter((l) => !l.includes('IDLE')).join('\n')), /and no idle line/);
});
