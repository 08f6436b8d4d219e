// serve-harness: starts the built executable's `serve` for host tests and
// benchmarks, and waits for its API port.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Served { port: number; socket: string; process: ChildProcess; log(): string; stop(): Promise<void> }

export async function startServe(exe: string, extraArgs: string[] = []): Promise<Served> {
  const socket = join(mkdtempSync(join(tmpdir(), 'cosi-serve-')), 'plugins.sock');
  // Plugins find the addon through APPLIANCE_NATIVE (beside out/build/appliance there is none).
  const env = {
    ...process.env,
    APPLIANCE_NATIVE: fileURLToPath(new URL('../../native/build/Release/appliance_native.node', import.meta.url)),
  };
  const child = spawn(exe, ['serve', '--listen', '127.0.0.1:0', '--plugin-socket', socket, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'], env });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => { log += d; });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      log += d; const m = /listening port=(\d+)/.exec(log); if (m) resolve(Number(m[1]));
    });
    child.on('exit', (c) => reject(new Error(`serve exited ${c} before listening:\n${log}`)));
  });
  return {
    port, socket, process: child, log: () => log,
    stop: () => new Promise((r) => {
      if (child.exitCode !== null) return r(); child.once('exit', () => r()); child.kill('SIGTERM');
    }),
  };
}
