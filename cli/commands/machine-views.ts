// uptime, memory, ps, mounts, netstat: what a shell's commands of those names show, from the
// machine's MachineService (read from its /proc when asked); restart: a plugin's process again.
import { callUnary, MACHINE_RPC, type MethodWire } from '../../machinery/model/service-wire.ts';
import { flag, type Parsed, noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, EXIT } from '../errors.ts';
import type { TableOut } from '../output/table.ts';
import { kibText as kib, uptimeText as duration } from '../output/units.ts';
import type { Session } from '../session.ts';
import { PLUGIN_STATUS_TYPE } from '../../proto/gen/resource-types.ts';

interface View<T> {
  name: string;
  summary: string;
  about: string;
  /** The MachineService method that answers (its request has no fields). */
  rpc: MethodWire<object, T>;
  /** The table or the line a person reads. */
  render(v: T): Table | string;
}

/** A view typed by its method's answer, kept in the list of any. */
const view = <T>(v: View<T>) => v as unknown as View<unknown>;

interface Table { header: string[]; rows: string[][] }
const table = (header: string[], rows: string[][]): Table => ({ header, rows });

const VIEWS: View<unknown>[] = [
  view({
    name: 'uptime', summary: 'uptime                 how long the machine is up, its load, CPUs and memory in one line',
    about: 'how long the machine has been up, its load averages (1, 5, 15 minutes), its CPUs and how busy\n'
      + 'they have been since boot, and its memory.',
    rpc: MACHINE_RPC.overview,
    render: (o) => {
      const load = [o.load1, o.load5, o.load15].map((l) => l.toFixed(2)).join(' ');
      return `up ${duration(o.uptimeSeconds)}, load ${load}, `
        + `${o.cpus} CPU${o.cpus === 1 ? '' : 's'} ${o.cpuBusyPercent}% busy since boot, `
        + `memory ${kib(o.memoryTotalKib - o.memoryAvailableKib)} used of ${kib(o.memoryTotalKib)}, `
        + `${o.processes} processes\n`;
    },
  }),
  view({
    name: 'memory', summary: 'memory                 the machine\'s memory, as free shows it',
    about: 'the machine\'s memory as free(1) shows it: total, used (total - available), free, cache, available;\n'
      + 'and how many processes the kernel\'s OOM killer has ended since boot.',
    rpc: MACHINE_RPC.overview,
    render: (o) => {
      return table(['', 'TOTAL', 'USED', 'FREE', 'CACHE', 'AVAILABLE', 'OOM KILLS'], [['Mem:', kib(o.memoryTotalKib),
        kib(o.memoryTotalKib - o.memoryAvailableKib), kib(o.memoryFreeKib), kib(o.memoryCachedKib),
        kib(o.memoryAvailableKib), o.oomKills === undefined ? '-' : String(o.oomKills)]]);
    },
  }),
  view({
    name: 'ps', summary: 'ps                     the machine\'s processes (which plugin each is)',
    about: 'the machine\'s processes (kernel threads left out), by pid: parent, state, threads, resident\n'
      + 'memory, CPU time, the plugin a process is, and its command.',
    rpc: MACHINE_RPC.processes,
    render: (v) => table(['PID', 'PPID', 'STATE', 'THREADS', 'RSS', 'CPU', 'PLUGIN', 'COMMAND'],
      (v.processes ?? []).map((p) => [
        String(p.pid), String(p.ppid), p.state, String(p.threads), kib(p.rssKib), `${p.cpuSeconds.toFixed(2)}s`,
        p.plugin || '-', p.command || `[${p.name}]`,
      ])),
  }),
  view({
    name: 'mounts', summary: 'mounts                 the machine\'s mounts',
    about: 'the mounts of the machine\'s mount namespace (PID 1\'s), in the kernel\'s order.',
    rpc: MACHINE_RPC.mounts,
    render: (v) => table(['SOURCE', 'TARGET', 'TYPE', 'OPTIONS'],
      (v.mounts ?? []).map((m) => [m.source, m.target, m.fstype, m.options])),
  }),
  view({
    name: 'netstat', summary: 'netstat                the machine\'s TCP and UDP sockets and who holds them',
    about: 'the machine\'s TCP and UDP sockets, listening ones first, each with the process that holds it.',
    rpc: MACHINE_RPC.sockets,
    render: (v) => table(['PROTO', 'LOCAL', 'REMOTE', 'STATE', 'PID', 'PROCESS'],
      (v.sockets ?? []).map((s) => [s.protocol, s.local, s.remote, s.state, s.pid ? String(s.pid) : '-',
        s.process || '-'])),
  }),
];

async function show(
  view: View<unknown>, s: Session, p: Parsed, out: (t: string) => void, printTable: TableOut,
): Promise<number> {
  const o = flag(p, 'output');
  if (o !== undefined && o !== 'json') throw new CliError(`-o ${o}: ${view.name} prints a table or json`, EXIT.usage);
  noArguments(`${view.name}`, p.positional);
  const v = await callUnary(s.state, view.rpc, {});
  const shown = o === 'json' ? `${JSON.stringify(v, null, 2)}\n` : view.render(v);
  if (typeof shown === 'string') out(shown);
  else printTable(shown.header, shown.rows);
  return EXIT.ok;
}

export const VIEW_COMMANDS: Command[] = VIEWS.map((view) => ({
  name: view.name, summary: view.summary, flags: ['output'],
  help: `usage: cosictl ${view.name} [-o json]\n\nShows ${view.about}\n\nflags:\n  -o, --output json   as JSON\n`,
  run: async ({ p, out, table, session }) => show(view, await session(), p, out, table),
  fanOut: true,
}));

export const RESTART_HELP = `usage: cosictl restart PLUGIN

Stops the plugin's process (SIGTERM, then SIGKILL after 5 s; its controllers finish as at
shutdown) and starts a new one at once, whatever its restart backoff; its PluginStatus counts
the restart. Needs the operator or admin role.

exit codes: 0 restarted, 1 refused, 4 no such plugin, 5 unreachable.
`;

export const restartCommand: Command = {
  name: 'restart', summary: 'restart PLUGIN         stop a plugin\'s process and start it again', help: RESTART_HELP,
  flags: [],
  async run({ p, out, session }) {
    const [name, extra] = p.positional;
    if (!name) throw new CliError('restart: which plugin? (cosictl get plugins lists them)', EXIT.usage);
    if (extra) throw new CliError(`restart: one plugin at a time, got "${extra}" too`, EXIT.usage);
    const s = await session();
    const r = MACHINE_RPC.restartPlugin.response.decode(await s.state.unary(MACHINE_RPC.restartPlugin.path,
      MACHINE_RPC.restartPlugin.request.encode({ name }), s.longCallMs));
    out(`plugin ${name} restarted${r.oldPid ? ` (process ${r.oldPid} stopped)` : ' (it was waiting to restart)'}\n`);
    return EXIT.ok;
  },
  completeArg: async (line, _current, lookups) => (line.args.length ? { values: [] }
    : { values: (await lookups.ids(PLUGIN_STATUS_TYPE)).map((value) => ({ value })) }),
};
