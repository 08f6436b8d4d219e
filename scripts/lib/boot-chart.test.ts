// The boot chart: the timeline read from a console as PID 1 writes it, and the SVG drawn from it.
import t from 'tap';
import { bootChartSvg, bootTimeline } from './boot-chart.ts';
import {
  formatMeminfo, formatMemorySample, formatMilestone, formatProcess, formatReady,
} from '../../init/boot/ready-line.ts';

const cost = { rssKiB: 50000, pssKiB: 20000, privateKiB: 15000, cpuSeconds: 0.5 };
const CONSOLE = [
  '[    0.512000] Run /init as init process',
  '[init 2.180] appliance 0.1.0 starting as pid 1 (node v24.21.0)',
  '[init 2.262] phase mount done in 80.0ms',
  `[init 2.300] ${formatMemorySample({ uptime: 2.3, usedKiB: 40 * 1024 })}`,
  '[init 2.870] phase api done in 600.0ms',
  `[init 2.871] ${formatReady({ uptime: 2.871, initStart: 1.24, mainStart: 2.17, memUsedKiB: 69 * 1024 })}`,
  '[init 3.900] engine/plugin/network: network: running 16 controller(s) on 19 watch(es)',
  '[init 4.000] engine/plugin/network: network: running 16 controller(s) on 19 watch(es)',
  `[init 4.462] ${formatMilestone({ name: 'network', uptime: 4.462, memUsedKiB: 150 * 1024 })}`,
  '[init 6.400] engine/plugin/time: time: running 2 controller(s) on 2 watch(es)',
  `[init 6.520] ${formatProcess({ name: 'init', pid: 1, ...cost, startedSeconds: 1.24 })}`,
  `[init 6.520] ${formatProcess({ name: 'plugin/network', pid: 60, ...cost, startedSeconds: 2.95 })}`,
  `[init 6.520] ${formatProcess({ name: 'plugin/time', pid: 78, ...cost, startedSeconds: 4.5 })}`,
  `[init 6.521] ${formatProcess({ name: 'plugin/<odd>', pid: 79, ...cost, startedSeconds: 4.6 })}`,
  `[init 6.521] ${formatMeminfo(new Map([['AnonPages', 129000]]))}`,
  `[init 6.523] ${formatMilestone({ name: 'plugins', uptime: 6.523, memUsedKiB: 184 * 1024 })}`,
].join('\n');

t.test('the timeline: phases, each plugin from its start to its first running line, milestones, memory', async (t) => {
  const tl = bootTimeline(CONSOLE);
  t.same([tl.initStart, tl.mainStart], [1.24, 2.17]);
  t.same(tl.phases.map((p) => [p.name, Number(p.start.toFixed(3)), p.end]), [['mount', 2.182, 2.262],
    ['api', 2.27, 2.87]]);
  t.same(tl.plugins, [
    { name: 'network', start: 2.95, end: 3.9, ready: true },
    { name: 'time', start: 4.5, end: 6.4, ready: true },
    { name: '<odd>', start: 4.6, end: 6.523, ready: false },
  ], 'a plugin not running yet reaches to the end');
  t.same(tl.milestones, [{ name: 'ready', at: 2.871 }, { name: 'network', at: 4.462 }, { name: 'plugins', at: 6.523 }]);
  t.same(tl.memory.map((m) => [m.at, m.usedKiB / 1024]), [[2.3, 40], [2.871, 69], [4.462, 150], [6.523, 184]]);
  t.throws(() => bootTimeline('[init 1.0] phase mount done in 1.0ms\n'), /no APPLIANCE READY line/);
  t.same(bootTimeline(CONSOLE.replace(/\n/g, '\r\n')), tl, 'a serial console\'s CRLF line ends read the same');
});

t.test('the SVG: a row each, the milestones with their multiple of the floor, the memory and its budget',
  async (t) => {
    const svg = bootChartSvg(bootTimeline(CONSOLE), { title: 'boot <1 run>', floor: 0.705, memoryBudgetMiB: 128 });
    t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="\d+"/);
    t.ok(svg.trimEnd().endsWith('</svg>'));
    for (const label of ['kernel, stage0', 'init: Node starts', 'init: mount', 'init: api', 'plugin network',
      'plugin time', 'plugin &lt;odd&gt;', 'used memory (MemTotal - MemAvailable)', 'budget 128 MiB']) {
      t.ok(svg.includes(`>${label}<`), `labelled: ${label}`);
    }
    t.ok(svg.includes('boot &lt;1 run&gt;'), 'the title, escaped');
    t.ok(svg.includes('>not running<'), 'a plugin that never said running is marked so');
    t.ok(svg.includes('ready 4.07x 2.87s'), 'ready as a multiple of the floor');
    t.ok(svg.includes('plugins 9.25x 6.52s'));
    t.ok(svg.includes('floor (static init) 0.70s') || svg.includes('floor (static init) 0.71s'));
    t.notOk(svg.includes('runtime floor'), 'no runtime floor line unless it was measured');
    const withRuntime = bootChartSvg(bootTimeline(CONSOLE), { title: 't', floor: 0.705, runtimeFloor: 1.41 });
    t.ok(withRuntime.includes('runtime floor 2.00x 1.41s'), 'the runtime\'s own start, with its multiple of the floor');
    t.notOk(withRuntime.includes('+5 processes'), 'no line for the runtime\'s five processes unless measured');
    const withChildren = bootChartSvg(bootTimeline(CONSOLE),
      { title: 't', floor: 0.705, runtimeFloor: 1.41, runtimeFloorPlugins: 2.115, memoryFloorMiB: 97.2 });
    t.ok(withChildren.includes('+5 processes 3.00x 2.12s'), 'five more processes of the runtime, as a multiple');
    t.ok(withChildren.includes('>runtime 97 MiB<'), 'the runtime\'s own memory marked on the curve');
    t.equal((svg.match(/<polyline /g) ?? []).length, 1, 'one memory curve');
    t.match(svg, />184\.0 MiB</, 'its last point labelled');
    t.notOk(/<[^>]*<|NaN|undefined|Infinity/.test(svg), 'no broken tag or number');
  });
