// run-program: a program run to its end as a test runs cosictl: its exit code (1 when a signal or the
// deadline ended it), standard output and error; stdin given or closed at once.
import { execFile } from 'node:child_process';

export interface Ran { code: number; out: string; err: string }

export interface RunOptions {
  /** Written to its standard input, which is then closed. */
  input?: string;
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Killed after this long (default a minute). */
  timeoutMs?: number;
  /** Its output is bytes, not text (a tar on stdout): kept one character per byte (latin1). */
  binaryOut?: boolean;
}

export function runProgram(file: string, args: readonly string[], o: RunOptions = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const c = execFile(file, args, {
      timeout: o.timeoutMs ?? 60_000, encoding: 'buffer', ...(o.env ? { env: { ...process.env, ...o.env } } : {}),
    }, (e, out, err) => resolve({
      code: e ? (e as { code?: number }).code ?? 1 : 0, out: out.toString(o.binaryOut ? 'latin1' : 'utf8'),
      err: err.toString(),
    }));
    if (o.input !== undefined) c.stdin!.end(o.input);
  });
}
