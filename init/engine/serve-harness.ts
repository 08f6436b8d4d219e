// serve-harness: starts the built executable's `serve` for host tests and benchmarks,
// and waits for its API port. Like every machine, the engine serves mutual TLS: each
// test process gets a fresh CA (given to serve in its machine config) and client
// certificates per role, and a cosictl config file with a context per role.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChannelTls } from '../../cosi/remote/grpc/client.ts';
import { RemoteState, type RemoteStateOptions } from '../../cosi/remote/client.ts';
import { ROLES, type Role } from '../../machinery/model/access.ts';
import { apiCaDocument, generateSecrets, type MachineSecrets } from '../../machinery/pki/secrets.ts';

export interface Served {
  port: number;
  socket: string;
  process: ChildProcess;
  /** The secrets of this run: the CA the engine trusts and a client certificate per role. */
  secrets: MachineSecrets;
  /** TLS for a client of `role` (default admin). */
  tls(role?: Role): ChannelTls;
  /** A State client of `role` (default admin) over mutual TLS. */
  client(role?: Role, o?: RemoteStateOptions): RemoteState;
  /** A cosictl config file with a context per role ("admin" is current). */
  cosictlConfig: string;
  log(): string;
  stop(): Promise<void>;
}

let runSecrets: MachineSecrets | undefined;
/** One CA per test process: fresh for each run, shared by its engines. */
export function testSecrets(): MachineSecrets {
  return (runSecrets ??= generateSecrets());
}

export interface ServeOptions {
  /** The machine config serve starts with, besides the CA it is given by default; false: none at all. */
  config?: string | false;
}

export async function startServe(exe: string, extraArgs: string[] = [], so: ServeOptions = {}): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'cosi-serve-'));
  const socket = join(dir, 'plugins.sock');
  const secrets = testSecrets();
  const configFile = join(dir, 'machine.yaml');
  if (so.config !== false) writeFileSync(configFile, `---\n${apiCaDocument(secrets)}---\n${so.config ?? ''}`);
  // Plugins find the addon through APPLIANCE_NATIVE (beside out/build/appliance there is none).
  const env = {
    ...process.env,
    APPLIANCE_NATIVE: fileURLToPath(new URL('../../native/build/Release/appliance_native.node', import.meta.url)),
  };
  const child = spawn(exe, ['serve', '--listen', '127.0.0.1:0', '--plugin-socket', socket,
    ...(so.config === false ? [] : ['--config', configFile]), ...extraArgs],
  { stdio: ['ignore', 'pipe', 'pipe'], env });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => {
    log += d;
  });
  let listening = false;
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      log += d;
      // Searched for until found, not after: the engine logs a line per call, and the log grows to megabytes.
      if (listening) return;
      const m = /listening port=(\d+)/.exec(log);
      if (m) {
        listening = true;
        resolve(Number(m[1]));
      }
    });
    child.on('exit', (c) => reject(new Error(`serve exited ${c} before listening:\n${log}`)));
  });
  const tls = (role: Role = 'admin'): ChannelTls => ({
    ca: secrets.ca.certificate, cert: secrets.clients[role].certificate, key: secrets.clients[role].key,
    serverName: '127.0.0.1',
  });
  const cosictlConfig = join(dir, 'cosictl.yaml');
  writeFileSync(cosictlConfig, JSON.stringify({
    context: 'admin',
    contexts: Object.fromEntries(ROLES.map((r) => [r, {
      endpoint: `127.0.0.1:${port}`, ca: tls(r).ca, cert: tls(r).cert, key: tls(r).key,
    }])),
  }), { mode: 0o600 });
  return {
    port, socket, process: child, secrets, tls, cosictlConfig, log: () => log,
    client: (role = 'admin', o = {}) => new RemoteState(`127.0.0.1:${port}`, { ...o, tls: tls(role) }),
    stop: () => new Promise((r) => {
      if (child.exitCode !== null) return r();
      child.once('exit', () => r());
      child.kill('SIGTERM');
    }),
  };
}
