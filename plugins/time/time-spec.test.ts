// time-spec against a real NTP server (chronyd on 127.0.0.1). The host's clock must not
// move, so the controller gets a clock that keeps its own skew from the real one; the
// real clock_settime/adjtime/RTC path runs in the QEMU test (qemu/time.test.ts).
import t, { type Test } from 'tap';
import { createSocket } from 'node:dgram';
import { controllerHarness } from '../../cosi/conformance/controller-harness.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { startChronyd } from '../../scripts/lib/chronyd.ts';
import { builtinTypes } from '../index.ts';
import { parseServer } from './sntp/client.ts';
import type { SystemClock } from './system-clock.ts';
import { timeServerMergeController } from './timeserver-merge.ts';
import { timeSpecController } from './time-spec.ts';
import { type TimeStatusSpec } from './types.ts';
import { TIME_NS, TIME_SERVER_SPEC_TYPE, TIME_STATUS_TYPE } from '../../proto/gen/resource-types.ts';

t.test('server addresses', async (t) => {
  t.same(parseServer('ntp.example'), { host: 'ntp.example', port: 123 });
  t.same(parseServer('10.0.2.2:12300'), { host: '10.0.2.2', port: 12300 });
  t.same(parseServer('[fd00::1]:1123'), { host: 'fd00::1', port: 1123 });
  t.same(parseServer('fd00::1'), { host: 'fd00::1', port: 123 });
  t.throws(() => parseServer('a:99999'), /port 99999 is out of range/);
  t.throws(() => parseServer('bad host'), /is not host, host:port/);
});

const chrony = await startChronyd();
t.teardown(() => chrony.stop());
// A port nobody listens on: the kernel answers ICMP port unreachable.
const closed = await new Promise<number>((r) => {
  const s = createSocket('udp4');
  s.bind(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close();
    r(p);
  });
});

const RTC = Date.UTC(2001, 0, 1);
let skew = 0; // the pretend clock minus the real one
const steps: number[] = [];
const slews: number[] = [];
let rtc = RTC;
const clock: SystemClock = {
  now: () => Date.now() + skew,
  step: (to) => {
    steps.push(to);
    skew = to - Date.now();
  },
  slew: (d) => {
    slews.push(d);
    skew += d;
  },
  readRtc: () => rtc,
  writeRtc: (ms) => { rtc = ms; },
  kernelSetFromRtc: () => false,
};

const h = await controllerHarness(t, [
  timeServerMergeController(), timeSpecController(clock, { pollMs: 300, retryMs: 200, queryTimeoutMs: 1000 }),
], {
  codecs: builtinCodecs(builtinTypes()),
});
const { until } = h;
const status = () => h.spec<TimeStatusSpec>({ namespace: TIME_NS, type: TIME_STATUS_TYPE, id: 'clock' });
const servers = { namespace: TIME_NS, type: TIME_SERVER_SPEC_TYPE, id: 'user' };

t.test('with no servers, the clock comes from the RTC', async (t) => {
  t.equal(await until(async () => (await status())?.source, 'rtc'), 'rtc');
  t.match(await status(), {
    synced: false, rtcAtBoot: '2001-01-01T00:00:00.000Z', rtcSetClock: 'plugin',
    error: 'no time servers configured (TimeServerSpec)',
  });
  t.same(steps, [RTC], 'the kernel had not set it, so the plugin did');
  t.ok(Math.abs(clock.now() - RTC) < 5000, 'the clock reads 2001');
});

t.test('the first server that answers sets the clock: a big offset is stepped, the RTC written', async (t) => {
  await h.create(servers, { servers: [`127.0.0.1:${closed}`, `127.0.0.1:${chrony.port}`] });
  t.equal(await until(async () => (await status())?.synced, true), true);
  const s = (await status())!;
  t.match(s, { source: 'sntp', server: `127.0.0.1:${chrony.port}`, stratum: 8, correction: 'step' });
  t.ok(Math.abs(s.offsetMs! - (Date.now() - RTC)) < 2000,
    `offset ${(s.offsetMs! / 86400e3 / 365.25).toFixed(2)} years`);
  t.ok(Math.abs(skew) < 100, `clock within 100 ms of chronyd (${skew} ms)`);
  t.ok(Math.abs(rtc - Date.now()) < 2000, 'the RTC was written with the new time');
  t.match(s.error, new RegExp(`127\\.0\\.0\\.1:${closed}: no answer \\(ECONNREFUSED\\)`),
    'the server that failed is named');
});

t.test('a small offset is slewed, not stepped', async (t) => {
  skew += 150; // drift 150 ms ahead; the next poll (300 ms) finds it
  const stepsBefore = steps.length;
  t.equal(await until(async () => (await status())?.correction, 'slew'), 'slew');
  t.equal(steps.length, stepsBefore, 'no step');
  t.ok(Math.abs(slews.at(-1)! + 150) < 50, `slewed by ${slews.at(-1)!.toFixed(1)} ms`);
});

t.test('when every server fails, the status says why and the last sync stays known', async (t) => {
  await h.update(servers, { servers: [`127.0.0.1:${closed}`] });
  t.equal(await until(async () => (await status())?.synced, false), false);
  t.match(await status(), { source: 'sntp', error: new RegExp(`no answer \\(ECONNREFUSED\\)`), lastSync: /^20/ });
});

t.test('a server the kernel will not even connect to fails like any other (the plugin keeps running)', async (t) => {
  // connect() to the broadcast address without SO_BROADCAST is EACCES (ENETUNREACH on a host with no routes at
  // all): nothing is sent.
  await h.update(servers, { servers: ['255.255.255.255', `127.0.0.1:${closed}`] });
  const refused = /255\.255\.255\.255: no answer \((EACCES|ENETUNREACH)\)/;
  t.equal(await until(async () => refused.test((await status())?.error ?? ''), true), true);
  t.match(await status(), { synced: false, error: new RegExp(`ECONNREFUSED`) }, 'the next server was asked too');
});

t.test('the winning layer is used: config over dhcp', async (t) => {
  await h.create({ ...servers, id: 'dhcp/eth0' }, { servers: [`127.0.0.1:${chrony.port}`], layer: 'dhcp' });
  await new Promise((r) => setTimeout(r, 500));
  t.equal((await status())?.synced, false, 'the config layer (failing) still wins over dhcp');
  t.equal((await status())?.layer, 'config');
  await h.remove(servers);
  t.equal(await until(async () => (await status())?.synced, true), true, 'without it, the dhcp layer syncs');
});

/** A pretend clock starting at `startMs`, with an RTC that reads `rtcMs` (undefined: none). */
function pretendClock(startMs: number, rtcMs: number | undefined, kernelSet: boolean) {
  let offset = startMs - Date.now();
  const moves: number[] = [];
  const c: SystemClock = {
    now: () => Date.now() + offset,
    step: (to) => {
      moves.push(to);
      offset = to - Date.now();
    },
    slew: (d) => { offset += d; },
    readRtc: () => rtcMs,
    writeRtc: () => {},
    kernelSetFromRtc: () => kernelSet,
  };
  return { clock: c, moves };
}

/** One time controller on a state of its own, with this floor. */
async function floored(t: Test, clock: SystemClock, floorMs: number) {
  const own = await controllerHarness(t, [
    timeServerMergeController(),
    timeSpecController(clock, { pollMs: 300, retryMs: 200, queryTimeoutMs: 1000, floorMs }),
  ], { codecs: builtinCodecs(builtinTypes()) });
  const status = () => own.spec<TimeStatusSpec>({ namespace: TIME_NS, type: TIME_STATUS_TYPE, id: 'clock' });
  return { ...own, status };
}

const FLOOR = Date.UTC(2026, 10, 26);

t.test('a dead RTC (1970) never sets the clock back past the floor; TimeStatus says where it started', async (t) => {
  const { clock, moves } = pretendClock(FLOOR + 2000, 0, false);
  const m = await floored(t, clock, FLOOR);
  t.equal(await m.until(async () => /moved forward/.test((await m.status())?.clockProblem ?? ''), true), true);
  t.same(moves, [FLOOR], 'the plugin set the clock from the RTC, but no earlier than the floor');
  t.match(await m.status(), {
    synced: false, rtcAtBoot: '1970-01-01T00:00:00.000Z', floor: '2026-11-26T00:00:00.000Z',
    clockProblem: 'the RTC read 1970-01-01T00:00:00Z at boot, before this build was made: the clock was moved '
      + 'forward to 2026-11-26T00:00:00Z',
  });
});

t.test('a clock at 2099 is named in TimeStatus; a server corrects it, and the problem goes', async (t) => {
  const far = Date.UTC(2099, 0, 1);
  const { clock } = pretendClock(far, far, true);
  const m = await floored(t, clock, FLOOR);
  t.equal(await m.until(async () => /years after/.test((await m.status())?.clockProblem ?? ''), true), true);
  t.match((await m.status())?.clockProblem, /^the clock reads 2099-01-01T00:00:\d\dZ, 72 years after this build was/);
  await m.create(servers, { servers: [`127.0.0.1:${chrony.port}`] });
  t.equal(await m.until(async () => (await m.status())?.synced, true), true);
  t.notOk((await m.status())?.clockProblem, 'synced to chronyd: a plausible clock');
  t.ok(Math.abs(clock.now() - Date.now()) < 2000, 'stepped back from 2099 by a server');
});

t.test('a server whose time is before the floor is not used', async (t) => {
  // chronyd answers with this host's time; a floor a year later makes that answer impossible.
  const future = Date.now() + 365 * 86400e3;
  const { clock, moves } = pretendClock(future + 1000, future + 1000, true);
  const m = await floored(t, clock, future);
  await m.create(servers, { servers: [`127.0.0.1:${chrony.port}`] });
  t.equal(await m.until(async () => /before this build/.test((await m.status())?.error ?? ''), true), true);
  const says = new RegExp(`^127\\.0\\.0\\.1:${chrony.port} says 20\\d\\d-.*, before this build was made .*: not used$`);
  t.match((await m.status())?.error, says);
  t.match(await m.status(), { synced: false });
  t.same(moves, [], 'the clock was not moved');
});
