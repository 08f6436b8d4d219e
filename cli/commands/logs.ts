// logs: what the engine, a plugin or the kernel printed, from the machine's log rings (LogService,
// init/engine/log/service.ts); dmesg is `logs kernel`.
import { LOG_RPC, callUnary } from '../../machinery/model/service-wire.ts';
import type { LogLine } from '../../proto/gen/spec-types.ts';
import { flag, has, type Parsed, noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import type { Candidate, Completion, Line, Lookups } from '../completion/contract.ts';
import { parseDuration } from '../duration.ts';
import { CliError, EXIT, exitCodeOf } from '../errors.ts';
import type { TableOut } from '../output/table.ts';
import { levelWord } from '../output/units.ts';
import type { Session } from '../session.ts';
import { PLUGIN_STATUS_TYPE } from '../../proto/gen/resource-types.ts';

const LINE_FLAGS = ['follow', 'tail', 'since', 'output'];

const LINE_FLAG_HELP = `  -f, --follow          after the kept lines, print new ones as they come (Ctrl-C ends)
      --tail N          only the last N kept lines
      --since WHEN      only lines from the last DURATION (30s, 5m, 2h) or since a time
                        (2026-11-24T10:00:00Z)
  -o, --output json     one JSON object per line: time, level, source, seq, message`;

export const LOGS_HELP = `usage: cosictl logs [SOURCE] [-f] [--tail N] [--since WHEN] [-p] [-o json]

Prints what SOURCE printed, oldest first: the engine, a plugin (network, storage, ...), or
the kernel. The machine keeps each source's latest lines in a ring in memory (128 KiB each
unless the kernel parameter appliance.log_ring_kib says otherwise); the kernel keeps its own.
Without SOURCE: the sources, with the lines each holds and how many it no longer holds.

Each line: TIME LEVEL MESSAGE, the time in UTC; a gap in a source's numbering is shown as
"... N lines no longer kept".

flags:
${LINE_FLAG_HELP}
  -p, --previous        the lines of a plugin's run before this one (it restarted, or crashed), as far as
                        the ring still holds them; exit 1 when it has run once only

exit codes: 0 done (or Ctrl-C while following), 2 usage, 4 no such source, 5 unreachable or
the machine went away while following.
`;

export const DMESG_HELP = `usage: cosictl dmesg [-f] [--tail N] [--since WHEN] [-o json]

The kernel log (cosictl logs kernel): the kernel's messages and what the machine's processes
wrote there (PID 1's boot lines too), oldest first.

flags:
${LINE_FLAG_HELP}
`;

/** --since as Unix milliseconds: a duration back from now, or a time. */
export function sinceOf(text: string, now = Date.now()): number {
  if (/^\d+[smh]?$/.test(text)) return now - parseDuration('since', text) * 1000;
  const t = Date.parse(text);
  if (Number.isNaN(t)) {
    throw new CliError(`--since: "${text}" is neither a duration (30s, 5m, 2h) nor a time (2026-11-24T10:00:00Z)`,
      EXIT.usage);
  }
  return t;
}

function tailOf(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 2 ** 31) {
    throw new CliError(`--tail: "${text}" is not a number of lines`, EXIT.usage);
  }
  return Number(text);
}


export function formatLogLine(l: LogLine): string {
  return `${l.time ?? ''} ${levelWord(l.level)} ${l.message}\n`;
}

async function printLines(s: Session, source: string, p: Parsed, out: (t: string) => void): Promise<number> {
  const output = flag(p, 'output');
  if (output !== undefined && output !== 'json') {
    throw new CliError(`-o ${output}: logs print lines or json (one object per line)`, EXIT.usage);
  }
  const tail = flag(p, 'tail');
  const since = flag(p, 'since');
  const follow = has(p, 'follow');
  const previous = has(p, 'previous');
  if (previous && follow) throw new CliError('--previous and -f: a run that ended cannot be followed', EXIT.usage);
  const request = LOG_RPC.logs.request.encode({
    source, follow, tail: tail === undefined ? 0 : tailOf(tail), previous,
    ...(since === undefined ? {} : { since: new Date(sinceOf(since)).toISOString() }),
  });
  let last: number | undefined;
  const call = s.state.stream(LOG_RPC.logs.path, request, (m) => {
    const l = LOG_RPC.logs.response.decode(m);
    if (output === 'json') {
      out(`${JSON.stringify(l)}\n`);
      return;
    }
    // A gap inside what the request asked for: the ring let lines go (or a slow reader was left behind).
    if (last !== undefined && l.seq > last + 1) out(`... ${l.seq - last - 1} lines no longer kept\n`);
    last = l.seq;
    out(formatLogLine(l));
  }, follow ? undefined : s.longCallMs);
  const interrupted = new Promise<'interrupted'>((r) => {
    process.once('SIGINT', () => r('interrupted'));
  });
  const ended = await Promise.race([call.done, interrupted]);
  if (ended === 'interrupted') {
    call.cancel();
    return EXIT.ok;
  }
  if (ended) {
    if (follow && exitCodeOf(ended) !== EXIT.notFound) {
      throw new CliError(`the machine stopped sending ${source}'s lines: ${ended.message}`, EXIT.unreachable);
    }
    throw ended;
  }
  return EXIT.ok;
}

async function printSources(s: Session, table: TableOut): Promise<number> {
  const r = await callUnary(s.state, LOG_RPC.logSources, {});
  table(['SOURCE', 'LINES', 'KEPT', 'RING', 'NO LONGER KEPT'], (r.sources ?? []).map((x) => [
    x.name, String(x.lines), kib(x.bytes), x.capacityBytes ? kib(x.capacityBytes) : 'kernel\'s', String(x.dropped),
  ]));
  return EXIT.ok;
}

const kib = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KiB`);

/** Sources to offer on Tab: engine, kernel and the machine's plugins. */
async function completeSource(line: Line, _current: string, lookups: Lookups): Promise<Completion> {
  if (line.args.length) return { values: [] };
  const plugins = await lookups.ids(PLUGIN_STATUS_TYPE);
  const values: Candidate[] = [
    { value: 'engine', about: 'the engine (PID 1)' }, { value: 'kernel', about: 'the kernel log' },
    ...plugins.map((p) => ({ value: p, about: 'plugin' })),
  ];
  return { values };
}

export const logsCommand: Command = {
  name: 'logs',
  summary: 'logs [SOURCE] [-f]     what the engine, a plugin or the kernel printed (--tail N, --since 5m,\n'
    + '                         --previous: a plugin\'s run before a restart; audit: who wrote what)',
  help: LOGS_HELP,
  flags: [...LINE_FLAGS, 'previous'],
  shorts: { f: 'follow' },
  fanOut: true,
  async run({ p, out, table, session }) {
    if (p.positional.length > 1) {
      throw new CliError(`logs: one source at a time, got ${p.positional.join(' ')}`, EXIT.usage);
    }
    const source = p.positional[0];
    if (source === undefined) {
      for (const f of LINE_FLAGS) {
        if (has(p, f)) throw new CliError(`logs: --${f} needs a SOURCE (see cosictl logs)`, EXIT.usage);
      }
      return printSources(await session(), table);
    }
    return printLines(await session(), source, p, out);
  },
  completeArg: completeSource,
};

export const dmesgCommand: Command = {
  name: 'dmesg',
  summary: 'dmesg [-f]             the kernel log',
  help: DMESG_HELP,
  flags: LINE_FLAGS,
  shorts: { f: 'follow' },
  fanOut: true,
  async run({ p, out, session }) {
    noArguments('dmesg', p.positional);
    return printLines(await session(), 'kernel', p, out);
  },
};
