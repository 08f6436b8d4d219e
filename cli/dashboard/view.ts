// view: what the dashboard shows, from what its feed holds: a pure function of the data and the
// screen's size, so it is tested without a terminal or a machine. Top to bottom: the machine in
// two lines, health, plugins, the extensions (when there are any: one line each), links and their
// addresses, the clock, mounts, then the newest log lines in whatever rows are left.
import type {
  ExtensionStatusSpec, HealthStatusSpec, LinkStatusSpec, MachineStatusSpec, MountSpecStatusSpec, PluginStatusSpec,
  TimeStatusSpec, UpdateStatusSpec, VersionSpec,
} from '../../proto/gen/spec-types.ts';
import type { LogLine, MachineOverview } from '../../proto/gen/spec-types.ts';
import { kibText, levelWord, uptimeText } from '../output/units.ts';
import { seg, type ScreenLine, type Style } from './screen.ts';

export interface DashboardData {
  endpoint: string;
  now: Date;
  overview?: MachineOverview;
  hostname?: string;
  versions: ReadonlyMap<string, VersionSpec>;
  machine?: MachineStatusSpec;
  health?: HealthStatusSpec;
  plugins: ReadonlyMap<string, PluginStatusSpec>;
  /** The extensions as the engine runs them (absent: a feed that reads none). */
  extensions?: ReadonlyMap<string, ExtensionStatusSpec>;
  links: ReadonlyMap<string, LinkStatusSpec>;
  time?: TimeStatusSpec;
  /** Where pulled updates stand (absent: no UpdatePolicy). */
  update?: UpdateStatusSpec;
  mounts: ReadonlyMap<string, MountSpecStatusSpec>;
  /** Oldest first. */
  logs: readonly LogLine[];
  /** What a section could not show, by section (a type this machine does not serve, a refused call). */
  problems: ReadonlyMap<string, string>;
  /** The machine stopped answering: why. */
  lost?: string;
}

/** Fewest rows the logs pane keeps, however many links or plugins there are. */
const MIN_LOG_ROWS = 3;

const LEVEL_STYLE: Record<string, Style> = { error: 'bad', warning: 'warn', debug: 'dim' };

const PLUGIN_STYLE: Record<string, Style> = {
  running: 'good', starting: 'warn', backoff: 'bad', stopped: 'dim', waiting: 'dim',
};

const heading = (name: string, problem?: string): ScreenLine => [
  seg(name, 'heading'), ...(problem ? [seg(`  ${problem}`, 'warn')] : []),
];

const clock = (iso: string | undefined) => (iso ? iso.slice(11, 19) : '--:--:--');

function titleLine(d: DashboardData): ScreenLine {
  const running = [...d.versions.values()].find((v) => v.running);
  return [seg(` ${d.hostname ? `${d.hostname}  ` : ''}${d.endpoint}`, 'title'),
    seg(running ? `  ${running.version}${running.slot ? ` slot ${running.slot}` : ''}` : '', 'title'),
    seg(`  ${d.now.toISOString().slice(11, 19)} UTC  q quits`, 'title')];
}

function machineLine(o: MachineOverview | undefined, problem: string | undefined): ScreenLine {
  if (!o) return [seg(problem ?? 'reading the machine...', problem ? 'warn' : 'dim')];
  const used = o.memoryTotalKib - o.memoryAvailableKib;
  return [seg(`up ${uptimeText(o.uptimeSeconds)}   load ${[o.load1, o.load5, o.load15].map((l) => l.toFixed(2))
    .join(' ')}   ${o.cpus} CPU${o.cpus === 1 ? '' : 's'} ${o.cpuBusyPercent}% busy since boot   memory `),
  seg(`${kibText(used)} of ${kibText(o.memoryTotalKib)}`, used > o.memoryTotalKib * 0.9 ? 'bad' : 'plain'),
  seg(`   ${o.processes} processes`)];
}

/** Problems of the types that have no section of their own, said after health. */
const ASIDE = ['stopping', 'version', 'hostname'];

function healthLine(d: DashboardData): ScreenLine {
  const { health: h, machine: m } = d;
  const aside = ASIDE.flatMap((k) => (d.problems.has(k) ? [seg(`   (${k}: ${d.problems.get(k)})`, 'warn')] : []));
  return [...healthWords(h, m, d.problems.get('health')), ...aside];
}

function healthWords(h: HealthStatusSpec | undefined, m: MachineStatusSpec | undefined, problem?: string): ScreenLine {
  const line: ScreenLine = [];
  if (m?.stage === 'stopping') {
    line.push(seg(`STOPPING (${m.action ?? ''}: ${m.reason})${m.heldBy?.length ? ` held by ${m.heldBy.join(', ')}`
      : ''}${m.deadline ? ` until ${clock(m.deadline)}` : ''}   `, 'bad'));
  }
  if (!h) return [...line, problem ? seg(`health: ${problem}`, 'warn') : seg('health: not known yet', 'dim')];
  if (h.healthy) return [...line, seg('healthy', 'good'), seg(h.since ? ` since ${clock(h.since)}` : '', 'dim')];
  const failing = (h.checks ?? []).filter((c) => !c.ok);
  return [...line, seg('UNHEALTHY', 'bad'), seg(`: ${failing.map((c) => `${c.name} (${c.message})`).join('; ')}`)];
}

/** Plugins side by side, as many to a line as fit. */
function pluginLines(plugins: ReadonlyMap<string, PluginStatusSpec>, width: number): ScreenLine[] {
  const cells = [...plugins].sort(([a], [b]) => a.localeCompare(b)).map(([name, p]): ScreenLine => [
    seg(`${name} `), seg(p.state ?? '?', PLUGIN_STYLE[p.state ?? ''] ?? 'plain'),
    seg(p.restarts ? ` ${p.restarts} restarts` : '', p.restarts ? 'warn' : 'plain'),
  ]);
  const lines: ScreenLine[] = [];
  let current: ScreenLine = [];
  let used = 0;
  for (const c of cells) {
    const len = c.reduce((n, s) => n + s.text.length, 0) + 4;
    if (used && used + len > width) {
      lines.push(current);
      current = [];
      used = 0;
    }
    current.push(seg('  '), ...c, seg('  '));
    used += len;
  }
  if (current.length) lines.push(current);
  return lines;
}

const EXTENSION_STYLE: Record<string, Style> = {
  running: 'good', failed: 'bad', crashing: 'bad', waiting: 'warn', fetching: 'warn', starting: 'warn',
};

/** One line per extension: its phase and version, critical, restarts, and why it does not run. */
function extensionLines(extensions: ReadonlyMap<string, ExtensionStatusSpec>): ScreenLine[] {
  const sorted = [...extensions].sort(([a], [b]) => a.localeCompare(b));
  const nameWidth = Math.max(4, ...sorted.map(([n]) => n.length));
  return sorted.map(([name, e]) => [
    seg(`  ${name.padEnd(nameWidth)}  `), seg((e.phase ?? '?').padEnd(9), EXTENSION_STYLE[e.phase ?? ''] ?? 'plain'),
    seg(`${e.version || '-'}${e.critical ? '  critical' : ''}`, 'dim'),
    seg(e.restarts ? `  ${e.restarts} restarts` : '', 'warn'),
    seg(e.phase !== 'running' && e.error ? `  ${e.error.split('\n')[0]}` : '', e.phase === 'waiting' ? 'dim' : 'bad'),
  ]);
}

function linkLines(links: ReadonlyMap<string, LinkStatusSpec>): ScreenLine[] {
  const sorted = [...links].sort(([, a], [, b]) => a.index - b.index);
  const nameWidth = Math.max(4, ...sorted.map(([n]) => n.length));
  return sorted.map(([name, l]) => [
    seg(`  ${name.padEnd(nameWidth)}  `),
    // A link that is up with no carrier is "down" (or "lowerlayerdown"); lo's state is "unknown".
    seg((l.up ? l.operState || 'up' : 'down').padEnd(8), !l.up ? 'dim' : /down/.test(l.operState) ? 'warn' : 'good'),
    seg(`${(l.mac ?? '').padEnd(17)}  `, 'dim'), seg((l.addresses ?? []).join('  ')),
  ]);
}

const UPDATE_STYLE: Record<string, Style> = {
  'up-to-date': 'good', waiting: 'warn', available: 'warn', downloading: 'warn', upgrading: 'warn', error: 'bad',
};

/** The update poller in one line: its state, what runs and is offered, and why it waits or failed. */
function updateLine(u: UpdateStatusSpec): ScreenLine {
  const offered = u.offeredVersion && u.offeredVersion !== u.runningVersion ? ` -> ${u.offeredVersion}` : '';
  const why = u.state === 'error' ? u.error : u.reason;
  return [seg(`  ${u.state ?? '?'}`, UPDATE_STYLE[u.state ?? ''] ?? 'plain'),
    seg(`  ${u.runningVersion}${offered} (${u.channel}, seed ${u.seed})`), seg(why ? `  ${why}` : '', 'dim')];
}

function timeLine(t: TimeStatusSpec | undefined): ScreenLine {
  if (!t) return [seg('  not known', 'dim')];
  // Without servers the plugin's "error" says none are configured: not a fault, as health sees it.
  if (t.error) return [seg('  '), seg(t.error, t.servers?.length ? 'bad' : 'dim')];
  if (!t.synced) {
    return [seg('  '), seg('not synced', t.servers?.length ? 'warn' : 'dim'),
      seg(t.servers?.length ? ` (servers: ${t.servers.join(', ')})` : ' (no time servers configured)', 'dim')];
  }
  const offset = t.offsetMs === undefined ? '' : ` offset ${t.offsetMs >= 0 ? '+' : ''}${t.offsetMs.toFixed(1)} ms`;
  const stratum = t.stratum ? ` stratum ${t.stratum}` : '';
  return [seg('  '), seg('synced', 'good'),
    seg(` from ${t.server ?? t.source ?? '?'}${stratum}${offset}${t.lastSync ? `, last ${clock(t.lastSync)}` : ''}`)];
}

function mountLines(mounts: ReadonlyMap<string, MountSpecStatusSpec>, width: number): ScreenLine[] {
  if (!mounts.size) return [[seg('  none declared', 'dim')]];
  const cells = [...mounts.values()].sort((a, b) => a.target.localeCompare(b.target)).map((m): ScreenLine => [
    seg(`  ${m.target} `), seg(m.state ?? '?', m.state === 'applied' ? 'good' : m.state === 'error' ? 'bad' : 'warn'),
    seg(m.error ? ` ${m.error}` : ` ${m.fstype ?? ''} ${m.device ?? m.source}`, m.error ? 'bad' : 'dim'),
  ]);
  // One mount a line when any has an error (the reason is long); otherwise as many as fit.
  if (cells.some((c) => c.some((s) => s.style === 'bad'))) return cells;
  const lines: ScreenLine[] = [];
  let current: ScreenLine = [];
  for (const c of cells) {
    const len = [...current, ...c].reduce((n, s) => n + s.text.length, 0);
    if (current.length && len > width) {
      lines.push(current);
      current = [];
    }
    current.push(...c);
  }
  if (current.length) lines.push(current);
  return lines;
}

function logLine(l: LogLine): ScreenLine {
  const word = levelWord(l.level);
  const style = LEVEL_STYLE[l.level ?? ''] ?? 'plain';
  return [seg(`${clock(l.time)} `, 'dim'), seg(`${(l.source ?? '').padEnd(11)} `), seg(word, style),
    seg(` ${l.message}`, style === 'dim' ? 'dim' : 'plain')];
}

/** The plugins in one line: how many run, and each one that does not, with its state (a small screen's form). */
function pluginSummary(plugins: ReadonlyMap<string, PluginStatusSpec>): ScreenLine {
  const others = [...plugins].filter(([, p]) => p.state !== 'running').sort(([a], [b]) => a.localeCompare(b));
  const running = plugins.size - others.length;
  return [seg(`  ${others.length ? `${running} of ${plugins.size} running` : `all ${plugins.size} running`}`,
    others.length ? 'plain' : 'good'),
  ...others.flatMap(([name, p]) => [seg(`  ${name} `), seg(p.state ?? '?', PLUGIN_STYLE[p.state ?? ''] ?? 'plain')])];
}

/** The frame's lines, at most `height` of them. */
export function dashboardLines(d: DashboardData, width: number, height: number): ScreenLine[] {
  const room = Math.max(1, height - MIN_LOG_ROWS - 1);
  const topWith = (plugins: ScreenLine[]): ScreenLine[] => [
    titleLine(d),
    ...(d.lost ? [[seg(`the machine stopped answering: ${d.lost}`, 'bad')]] : []),
    machineLine(d.overview, d.problems.get('machine')),
    healthLine(d),
    heading('PLUGINS', d.problems.get('plugins')), ...plugins,
    ...(d.extensions?.size ? [heading('EXTENSIONS', d.problems.get('extensions')), ...extensionLines(d.extensions)]
      : []),
    heading('LINKS', d.problems.get('links')), ...linkLines(d.links),
    [...heading('TIME', d.problems.get('time')), ...timeLine(d.time)],
    ...(d.update ? [[...heading('UPDATES', d.problems.get('updates')), ...updateLine(d.update)]] : []),
    heading('MOUNTS', d.problems.get('mounts')), ...mountLines(d.mounts, width),
  ];
  const full = topWith(pluginLines(d.plugins, width));
  // A small screen gets the plugins in one line, so that the links (eth0 and its addresses) still show.
  const top = full.length > room && d.plugins.size ? topWith([pluginSummary(d.plugins)]) : full;
  // Many links or plugins give way to the logs' last rows: the top is cut, never the pane.
  const shown = top.slice(0, room);
  const logs = d.logs.slice(-Math.max(0, height - shown.length - 1)).map(logLine);
  const lines = [...shown, heading('LOGS', d.problems.get('logs')), ...logs].slice(0, height);
  // A whole screen, however few the logs so far: what is printed once into a pipe has $LINES rows too.
  while (lines.length < height) lines.push([]);
  return lines;
}
