// The dashboard's layout and painting, without a terminal or a machine: sections, cuts to the
// screen's size, what colors mean, and nothing a machine's text holds moves the cursor.
import t from 'tap';
import type { ExtensionStatusSpec, LogLine, PluginStatusSpec } from '../../proto/gen/spec-types.ts';
import { terminalCaps } from '../terminal.ts';
import { fit, frame, lineLength, paintLine, seg } from './screen.ts';
import { dashboardLines, type DashboardData } from './view.ts';

const logs = (n: number): LogLine[] => Array.from({ length: n }, (_, i) => ({
  source: i % 2 ? 'network' : 'engine', time: `2026-11-24T10:00:${String(i).padStart(2, '0')}.000Z`,
  level: i === 3 ? 'error' : 'info', message: `line ${i}`, seq: i,
}));

const data = (over: Partial<DashboardData> = {}): DashboardData => ({
  endpoint: '127.0.0.1:50000', now: new Date('2026-11-24T10:01:00Z'), hostname: 'node1',
  overview: {
    uptimeSeconds: 3725, load1: 0.5, load5: 0.25, load15: 0, cpus: 2, cpuBusyPercent: 12, memoryTotalKib: 262144,
    memoryAvailableKib: 131072, memoryFreeKib: 100000, memoryCachedKib: 20000, processes: 40,
  } as DashboardData['overview'],
  versions: new Map([['a', { version: '1.2.3', slot: 'a', running: true } as never]]),
  health: { healthy: true, checks: [], since: '2026-11-24T09:59:00Z' },
  plugins: new Map([['network', { state: 'running', pid: 10, restarts: 0 }],
    ['storage', { state: 'backoff', pid: 0, restarts: 4 }]]),
  links: new Map([['eth0', { index: 2, type: 'ether', up: true, operState: 'up', mac: '52:54:00:12:34:56',
    addresses: ['10.0.2.15/24', '192.0.2.77/24'] }], ['lo', { index: 1, type: 'loopback', up: true,
    operState: 'unknown', addresses: ['127.0.0.1/8'] }]]),
  time: { synced: true, server: '10.0.2.2', stratum: 3, offsetMs: 0.42, lastSync: '2026-11-24T10:00:30Z' },
  mounts: new Map([['var', { state: 'applied', target: '/var', source: 'label:VAR', device: '/dev/vda1',
    fstype: 'ext4' }]]),
  logs: logs(30), problems: new Map(), ...over,
});

const text = (d: DashboardData, width = 100, height = 30) =>
  dashboardLines(d, width, height).map((l) => paintLine(l, width, false));

t.test('every section, in order, the logs pane filling the rows left', async (t) => {
  const lines = text(data());
  t.equal(lines.length, 30, 'exactly the screen\'s height');
  t.match(lines[0], /^ node1  127\.0\.0\.1:50000  1\.2\.3 slot a  10:01:00 UTC  q quits$/);
  t.match(lines[1], /^up 1h 2m 5s {3}load 0\.50 0\.25 0\.00 {3}2 CPUs 12% busy since boot {3}memory 128Mi of 256Mi/);
  t.match(lines[2], /^healthy since 09:59:00$/);
  const at = (h: string) => lines.indexOf(lines.find((l) => l.startsWith(h))!);
  t.ok(at('PLUGINS') < at('LINKS') && at('LINKS') < at('TIME') && at('TIME') < at('MOUNTS')
    && at('MOUNTS') < at('LOGS'), 'sections in order');
  t.match(lines[at('PLUGINS') + 1], /network running {4}storage backoff 4 restarts/);
  t.match(lines[at('LINKS') + 1], /^ {2}lo {4}unknown/, 'links by index');
  t.match(lines[at('LINKS') + 2], /^ {2}eth0 {2}up {6}52:54:00:12:34:56 {2}10\.0\.2\.15\/24 {2}192\.0\.2\.77\/24$/);
  t.match(lines[at('TIME')], /^TIME {2}synced from 10\.0\.2\.2 stratum 3 offset \+0\.4 ms, last 10:00:30$/);
  t.match(lines[at('MOUNTS') + 1], /^ {2}\/var applied ext4 \/dev\/vda1$/);
  const pane = lines.slice(at('LOGS') + 1);
  t.equal(pane.length, 30 - at('LOGS') - 1);
  t.match(pane.at(-1), /^10:00:29 network {5}INFO {2}line 29$/, 'the newest line last');
  t.match(pane[0], new RegExp(`line ${30 - pane.length}$`), 'the oldest that fits first');
});

t.test('extensions: one line each after the plugins, with what keeps one from running; none, no section', async (t) => {
  const lines = text(data({ extensions: new Map([
    ['web', { phase: 'running', version: '2.0.0', critical: true, restarts: 1 } as ExtensionStatusSpec],
    ['db', { phase: 'waiting', version: '1.0.0', critical: false, restarts: 0,
      error: 'waiting for network (eth0 has no DHCP lease (selecting))' } as ExtensionStatusSpec],
    ['modem', { phase: 'failed', version: '', critical: false, restarts: 0,
      error: 'devices: /dev/ttyS1: not granted\nmore' } as ExtensionStatusSpec],
  ]) }), 120);
  const at = lines.findIndex((l) => l.startsWith('EXTENSIONS'));
  t.ok(at > lines.findIndex((l) => l.startsWith('PLUGINS')) && at < lines.findIndex((l) => l.startsWith('LINKS')));
  t.same(lines.slice(at + 1, at + 4), [
    '  db     waiting  1.0.0  waiting for network (eth0 has no DHCP lease (selecting))',
    '  modem  failed   -  devices: /dev/ttyS1: not granted',
    '  web    running  2.0.0  critical  1 restarts',
  ]);
  t.notOk(text(data()).some((l) => l.startsWith('EXTENSIONS')), 'a machine without extensions: no section');
});

t.test('unhealthy names each failing check; stopping says why and who holds it', async (t) => {
  const lines = text(data({
    health: { healthy: false, checks: [{ name: 'plugins', ok: false, message: 'storage is backoff' },
      { name: 'time', ok: true, message: '' }, { name: 'disks', ok: false, message: '/var not mounted' }] },
    machine: { stage: 'stopping', action: 'reboot', reason: 'the API asked', heldBy: ['etcd'],
      deadline: '2026-11-24T10:01:30Z', holdResult: '' },
  }), 140);
  t.equal(lines[2], 'STOPPING (reboot: the API asked) held by etcd until 10:01:30   '
    + 'UNHEALTHY: plugins (storage is backoff); disks (/var not mounted)');
});

t.test('what a section could not read, and a machine gone, are said', async (t) => {
  const lines = text(data({ problems: new Map([['time', 'unknown resource type "TimeStatuses"']]), lost: 'EOF' }));
  t.equal(lines[1], 'the machine stopped answering: EOF');
  const refused = text(data({ health: undefined, problems: new Map([['health', 'permission denied'],
    ['version', 'deadline exceeded']]) }));
  t.equal(refused[2], 'health: permission denied   (version: deadline exceeded)', 'problems without a section');
  t.ok(lines.some((l) => l.startsWith('TIME  unknown resource type "TimeStatuses"')));
});

t.test('a small screen: lines cut with an ellipsis, the top kept, at least a few log lines', async (t) => {
  const lines = text(data(), 40, 12);
  t.equal(lines.length, 12);
  t.same(lines.slice(-4).map((l) => l.slice(0, 8)), ['LOGS', '10:00:27', '10:00:28', '10:00:29'],
    'the logs pane keeps its rows; the top gives way');
  for (const l of lines) t.ok([...l].length <= 40, l);
  t.match(lines[1], /…$/);
  t.equal(text(data(), 100, 60).filter((l) => /^10:00:\d\d /.test(l)).length, 30, 'no more log lines than there are');
});

t.test('painting: colors by meaning, none without color, nothing from the machine moves the cursor', async (t) => {
  const line = [seg('ok', 'good'), seg(' and '), seg('bad', 'bad')];
  t.equal(paintLine(line, 80, true), '\x1b[32mok\x1b[0m and \x1b[1;31mbad\x1b[0m');
  t.equal(paintLine(line, 80, false), 'ok and bad');
  t.equal(paintLine([seg('a\x1b[2Jb\rc\x07')], 80, true), 'a?[2Jb?c?', 'control characters shown as ?');
  t.equal(paintLine([seg('title', 'title')], 10, true), '\x1b[7mtitle\x1b[0m\x1b[7m     \x1b[0m', 'a bar across');
  t.same(fit([seg('abcdef'), seg('ghi', 'bad')], 5), [seg('abcd'), seg('…', 'dim')]);
  t.equal(lineLength(fit([seg('añ€😀xyz')], 5)), 5, 'counted in characters');
  t.equal(frame(['a', 'b']), '\x1b[Ha\x1b[K\r\nb\x1b[K\x1b[J');
});

t.test('terminal capabilities: NO_COLOR, TERM=dumb and pipes', async (t) => {
  const tty = { isTTY: true, columns: 90, rows: 20 };
  t.same(terminalCaps(tty, { TERM: 'xterm' }), { interactive: true, color: true, columns: 90, rows: 20 });
  t.same(terminalCaps(tty, { TERM: 'xterm', NO_COLOR: '1' }).color, false, 'NO_COLOR');
  t.same(terminalCaps(tty, { TERM: 'xterm', NO_COLOR: '' }).color, true, 'an empty NO_COLOR is not set');
  t.same(terminalCaps(tty, { TERM: 'dumb' }), { interactive: false, color: false, columns: 90, rows: 20 });
  t.same(terminalCaps({}, { TERM: 'xterm', COLUMNS: '77', LINES: '33' }),
    { interactive: false, color: false, columns: 77, rows: 33 }, 'a pipe takes $COLUMNS and $LINES');
  t.same(terminalCaps({}, { COLUMNS: 'wide' }).columns, 120, 'else 120 by 50');
});

t.test('a 60x12 pane: the plugins in one line, so that eth0 and its addresses show', async (t) => {
  const seven = new Map<string, PluginStatusSpec>(['issue', 'network', 'platform', 'storage', 'system', 'time',
    'extra'].map((n) => [n, { state: 'running', pid: 1, restarts: 0 }]));
  const lines = text(data({ plugins: seven }), 60, 12);
  t.match(lines.join('\n'), /^ {2}all 7 running$/m, 'all running: said in one line');
  t.match(lines.join('\n'), /^ {2}eth0 {2}up /m, 'eth0 is on the screen');
  const one = new Map<string, PluginStatusSpec>([...seven, ['storage', { state: 'backoff', pid: 0, restarts: 2 }]]);
  t.match(text(data({ plugins: one }), 60, 12).join('\n'), /^ {2}6 of 7 running {2}storage backoff$/m,
    'what does not run is named');
  t.match(text(data({ plugins: seven }), 100, 40).join('\n'), /issue running/, 'a big screen: each plugin');
});

t.test('updates: one line after the clock, only with an update policy', async (t) => {
  const none = text(data());
  t.notOk(none.some((l) => l.startsWith('UPDATES')), 'no policy, no line');
  const waiting = text(data({ update: { state: 'waiting', runningVersion: '1.2.3', offeredVersion: '1.3.0',
    channel: 'stable', seed: 2047, reason: 'wave 1 (seed 2047) takes 1.3.0 from 2026-11-24T12:00:00.000Z',
    error: '' } as never }));
  const at = waiting.findIndex((l) => l.startsWith('UPDATES'));
  t.ok(at > waiting.findIndex((l) => l.startsWith('TIME')), 'after the clock');
  t.match(waiting[at], /^UPDATES {2}waiting {2}1\.2\.3 -> 1\.3\.0 \(stable, seed 2047\) {2}wave 1 \(seed 2047\) takes/);
  const failed = { state: 'error', runningVersion: '1.2.3', offeredVersion: '', channel: 'stable', seed: 3, reason: '',
    error: 'expired metadata (a stale or frozen repository): Final timestamp.json is expired' };
  const error = text(data({ update: failed as never }));
  t.match(error.find((l) => l.startsWith('UPDATES')), /error {2}1\.2\.3 \(stable, seed 3\) {2}expired metadata/);
});
