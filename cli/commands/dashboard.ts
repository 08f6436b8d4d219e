// dashboard: the machine on one screen, redrawn as it changes (cli/dashboard/: feed keeps the
// data from watches and streams, view lays it out, screen paints it for this terminal).
import { has, noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import { DashboardFeed } from '../dashboard/feed.ts';
import { ENTER_SCREEN, frame, LEAVE_SCREEN, paintLine } from '../dashboard/screen.ts';
import { dashboardLines } from '../dashboard/view.ts';
import { CliError, EXIT, exitCodeOf } from '../errors.ts';
import type { Session } from '../session.ts';
import { terminalCaps, type TerminalCaps } from '../terminal.ts';

export const DASHBOARD_HELP = `usage: cosictl dashboard [--once]

The machine on one screen, redrawn as it changes: its name, version, uptime, load, CPUs and
memory; whether it is healthy (and what fails when not) or stopping; its plugins; its links
and their addresses; the clock; its mounts; and the newest lines the engine and the plugins
printed. Resources are watched, so a change shows within a moment; the figures are read every
2 s. Works in any terminal cosictl can reach the machine from: no shell on the machine, no SSH.

Keys: q (or Ctrl-C) quits.

Colors follow the terminal: none when NO_COLOR is set, on TERM=dumb, or into a pipe or file.
Into a pipe or file (or with --once) it prints the screen once, sized by $COLUMNS and $LINES
(default 120 by 50), and ends.

flags:
      --once            print the screen once and end

exit codes: 0 quit (or the screen printed), 1 --once could not read a part (the screen says
which), 2 usage, 5 unreachable or the machine stopped answering.
`;

/** Redraws at most this often: a burst of changes (a boot, a config applied) is one frame. */
const FRAME_MS = 100;

const paint = (feed: DashboardFeed, caps: TerminalCaps) => dashboardLines(feed.data(), caps.columns, caps.rows)
  .map((l) => paintLine(l, caps.columns, caps.color));

async function once(s: Session, out: (t: string) => void): Promise<number> {
  const caps = terminalCaps(process.stdout);
  const feed = new DashboardFeed(s, { follow: false, logTail: caps.rows, changed: () => undefined });
  try {
    await feed.start();
  } finally {
    feed.close();
  }
  out(`${paint(feed, { ...caps, color: false }).join('\n')}\n`);
  // The screen says what could not be read; the exit code says that something could not.
  return feed.failed ? exitCodeOf(feed.failed) : EXIT.ok;
}

/** Keys that quit: q, Q, Ctrl-C, each pressed alone (not inside a function key's sequence or a paste). */
const QUIT_KEYS = new Set(['q', 'Q', '\x03']);

async function live(s: Session): Promise<number> {
  const stdout = process.stdout;
  const stdin = process.stdin;
  let caps = terminalCaps(stdout);
  let pending: NodeJS.Timeout | undefined;
  let drawn = 0;
  let stopped = false;
  let failure: unknown;
  let quit: () => void = () => undefined;
  const quitting = new Promise<void>((r) => {
    quit = r;
  });
  const draw = () => {
    if (pending) clearTimeout(pending);
    pending = undefined;
    // Streams being closed still report: nothing is drawn over the screen the user returned to.
    if (stopped) return;
    drawn = Date.now();
    // A bug drawing (in a timer) must not leave the terminal raw in the alternate screen: it ends the dashboard.
    try {
      stdout.write(frame(paint(feed, caps)));
    } catch (e) {
      failure = e;
      quit();
    }
  };
  const changed = () => {
    if (!stopped) pending ??= setTimeout(draw, Math.max(0, FRAME_MS - (Date.now() - drawn)));
  };
  const feed = new DashboardFeed(s, { follow: true, logTail: caps.rows, changed });
  const resized = () => {
    caps = terminalCaps(stdout);
    draw();
  };
  const key = (b: Buffer) => {
    if (QUIT_KEYS.has(b.toString('latin1'))) quit();
  };
  // Whatever ends the process (an uncaught error too), the terminal is given back as it was.
  const restore = () => {
    if (stdin.isTTY) stdin.setRawMode(false);
    stdout.write(LEAVE_SCREEN);
  };
  let tick: NodeJS.Timeout | undefined;
  try {
    process.once('exit', restore);
    stdout.write(ENTER_SCREEN);
    stdout.on('resize', resized);
    process.once('SIGINT', quit);
    process.once('SIGTERM', quit);
    if (stdin.isTTY) {
      stdin.setRawMode(true);
      stdin.on('data', key);
      stdin.resume();
    }
    tick = setInterval(draw, 1000);
    draw();
    await Promise.race([feed.start(), quitting]);
    draw();
    await quitting;
  } finally {
    stopped = true;
    clearInterval(tick);
    if (pending) clearTimeout(pending);
    feed.close();
    stdout.off('resize', resized);
    process.off('SIGINT', quit);
    process.off('SIGTERM', quit);
    if (stdin.isTTY) {
      stdin.off('data', key);
      stdin.pause();
    }
    process.off('exit', restore);
    restore();
  }
  if (failure) throw failure;
  const lost = await Promise.race([feed.gone, Promise.resolve(undefined)]);
  if (lost) throw new CliError(`the machine stopped answering: ${lost}`, EXIT.unreachable);
  return EXIT.ok;
}

export const dashboardCommand: Command = {
  name: 'dashboard',
  summary: 'dashboard              the machine on one screen, live: health, plugins, links, time, mounts, logs',
  help: DASHBOARD_HELP,
  flags: ['once'],
  async run({ p, out, session }) {
    noArguments('dashboard', p.positional);
    const s = await session();
    return has(p, 'once') || !terminalCaps(process.stdout).interactive ? once(s, out) : live(s);
  },
};
