// chronyd: an independent NTP server for the time tests, on 127.0.0.1 only. It runs with
// -x (it never touches the host's clock) and `local stratum 8` (it serves the host's
// time without upstream servers). scripts/install-host-deps.sh unpacks it into the cache.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CACHE } from './paths.ts';

export const CHRONYD = join(CACHE, 'tools', 'chrony', 'usr', 'sbin', 'chronyd');

export interface Chronyd { port: number; stop(): Promise<void>; log(): string }

async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  s.close();
  return port;
}

export async function startChronyd(): Promise<Chronyd> {
  if (!existsSync(CHRONYD)) throw new Error(
    `${CHRONYD} missing: run \`npm run setup\` (scripts/install-host-deps.sh unpacks chrony there)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'chronyd-'));
  const port = await freeUdpPort();
  writeFileSync(join(dir, 'chrony.conf'), [
    'local stratum 8', `port ${port}`, 'bindaddress 127.0.0.1', 'allow 127.0.0.1', 'cmdport 0',
    `pidfile ${join(dir, 'chronyd.pid')}`, `driftfile ${join(dir, 'drift')}`, '',
  ].join('\n'));
  let output = '';
  const child: ChildProcess = spawn(
    CHRONYD, ['-x', '-d', '-u', 'root', '-f', join(dir, 'chrony.conf')], { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (d: Buffer) => {
    output += d;
  });
  child.stderr!.on('data', (d: Buffer) => {
    output += d;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // chronyd writes its drift file on the way out: remove the directory after it exited.
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', () => child.kill('SIGKILL'));
  // Ready when it answers a client request.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`chronyd exited ${child.exitCode}: ${output}`);
    if (await answers(port)) return { port, stop, log: () => output };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`chronyd did not answer on 127.0.0.1:${port} within 10 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 300);
    s.on('error', () => done(false));
    s.on('message', () => done(true));
    const req = Buffer.alloc(48);
    req[0] = 0x23;
    req[47] = 1;
    s.send(req, port, '127.0.0.1');
  });
}
