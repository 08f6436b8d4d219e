// freeze: copyPlain copies what structuredClone copies, as structuredClone does (bytes as a Uint8Array, undefined
// values and holes kept, nothing shared with the original), for random plain data and for every built-in
// definition; what is not plain data is left to structuredClone.
import t from 'tap';
import { copyPlain } from './freeze.ts';
import { allBuiltinDefinitions } from '../../machinery/model/definitions.ts';

let seed = 11;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
function value(depth: number): unknown {
  const r = random();
  if (depth > 4 || r < 0.3) {
    const leaves = [0, -1.5, 2 ** 40, '', 'text ü', true, false, null, undefined, Buffer.from('ab'),
      new Uint8Array([1, 2, 3])];
    return leaves[Math.floor(random() * leaves.length)];
  }
  if (r < 0.55) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 5); i > 0; i--) o[`k${Math.floor(random() * 9)}`] = value(depth + 1);
  return o;
}

/** Every object and array reachable from `v`. */
function objects(v: unknown, out: Set<unknown> = new Set()): Set<unknown> {
  if (v && typeof v === 'object') {
    out.add(v);
    for (const x of Object.values(v)) objects(x, out);
  }
  return out;
}

t.test('as structuredClone for 2000 random values, sharing nothing', async (t) => {
  let differ = 0;
  for (let i = 0; i < 2000; i++) {
    const v = value(0);
    const mine = copyPlain(v);
    const theirs = structuredClone(v);
    if (!t.strictSame(mine, theirs, `value ${i}`, { diagnostic: false })) differ++;
    const shared = [...objects(mine)].filter((o) => objects(v).has(o));
    if (shared.length) t.fail(`value ${i} shares ${shared.length} object(s) with its original`);
  }
  t.equal(differ, 0);
  const holes = [1, , 3];
  t.equal(1 in copyPlain(holes), false, 'a hole stays a hole');
  t.ok(copyPlain(Buffer.from('x')) instanceof Uint8Array && !Buffer.isBuffer(copyPlain(Buffer.from('x'))),
    'a Buffer comes back a Uint8Array, as from structuredClone');
});

t.test('what is not plain data goes to structuredClone; every built-in definition copies alike', async (t) => {
  const m = new Map([[1, { a: 1 }]]);
  t.strictSame(copyPlain({ m }), structuredClone({ m }));
  const d = new Date(5);
  t.equal(copyPlain(d).getTime(), 5);
  for (const def of allBuiltinDefinitions()) t.strictSame(copyPlain(def), structuredClone(def), def.type);
});
