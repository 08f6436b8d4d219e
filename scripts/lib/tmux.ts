// tmux: a terminal for tests of what a person sees (completion in an interactive shell, the
// dashboard): a detached tmux session of a given size on a server of its own, keys sent to it,
// its screen read back. The server's socket is per test process, so tests never share a server; the
// session's environment is the test's, without tap's color settings, plus what `env` says.
import { execFile } from 'node:child_process';

// tap sets NO_COLOR and FORCE_COLOR=0 for its tests; the terminal's programs must not inherit them.
const ENV = Object.fromEntries(Object.entries(process.env)
  .filter(([k]) => !/^(NO_COLOR|FORCE_COLOR|COLOR)$/.test(k)));

const run = (args: string[]) => new Promise<string>((resolve, reject) => {
  execFile('tmux', args, { env: ENV }, (e, out, err) => (e
    ? reject(new Error(`tmux ${args.join(' ')}: ${err || e.message}`)) : resolve(out)));
});

export interface TmuxOptions {
  columns?: number;
  rows?: number;
  /** Set in the session's environment (beside tmux's own TERM). */
  env?: Record<string, string>;
}

export class Tmux {
  private constructor(private readonly socket: string, readonly name: string) {}

  /** Starts `argv` in a new session; it stays (its pane shown as dead) after the command ends. */
  static async start(name: string, argv: string[], o: TmuxOptions = {}): Promise<Tmux> {
    const t = new Tmux(`cosi-test-${process.pid}`, `${name}-${process.pid}`);
    const env = Object.entries(o.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // The command's exit status is printed after it (tmux's pane_dead_status stays empty for a program that
    // set its terminal raw, as Node's setRawMode does); the pane stays to be read (remain-on-exit, set in the
    // same tmux command line, before the command can end).
    await run(['-L', t.socket, 'new-session', '-d', '-s', t.name, '-x', String(o.columns ?? 200),
      '-y', String(o.rows ?? 20), ...env, 'sh', '-c', '"$@"; printf "\\n[exit %s]\\n" $?', 'sh', ...argv,
      ';', 'set-option', '-t', t.name, 'remain-on-exit', 'on']);
    return t;
  }

  keys(...keys: string[]): Promise<string> { return run(['-L', this.socket, 'send-keys', '-t', this.name, ...keys]); }

  /** The screen as text (capture-pane drops trailing spaces); with `escapes`, its colors as SGR sequences. */
  screen(escapes = false): Promise<string> {
    return run(['-L', this.socket, 'capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', this.name]);
  }

  /** The screen once it matches `re`, or as it is after `ms`. */
  async waitFor(re: RegExp, ms = 10_000): Promise<string> {
    let text = await this.screen();
    for (const end = Date.now() + ms; !re.test(text) && Date.now() < end; text = await this.screen()) {
      await new Promise((r) => setTimeout(r, 100));
    }
    return text;
  }

  resize(columns: number, rows: number): Promise<string> {
    return run(['-L', this.socket, 'resize-window', '-t', this.name, '-x', String(columns), '-y', String(rows)]);
  }

  /** The exit status of the session's command once it ended, else undefined. */
  async exitStatus(): Promise<number | undefined> {
    const m = /^\[exit (\d+)\]$/m.exec(await this.screen());
    return m ? Number(m[1]) : undefined;
  }

  /** The exit status once the command ended within `ms`, else undefined. */
  async waitExit(ms = 5000): Promise<number | undefined> {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
      const status = await this.exitStatus();
      if (status !== undefined) return status;
    }
    return this.exitStatus();
  }

  /** Ends the session; one that is gone already (its test killed it, or its server ended) is left. */
  async kill(): Promise<void> {
    try {
      await run(['-L', this.socket, 'kill-session', '-t', this.name]);
    } catch (e) {
      if (!/can't find session|no server running|error connecting/.test((e as Error).message)) throw e;
    }
  }
}
