// qmp: a small client for QEMU's machine protocol (JSON lines on a unix socket).
import { connect, type Socket } from 'node:net';

export interface QmpEvent { event: string; data?: unknown; timestamp?: unknown }

export class QmpError extends Error {
  constructor(message: string, readonly command: string) {
    super(message);
    this.name = 'QmpError';
  }
}

export interface QmpClient {
  execute<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T>;
  readonly events: QmpEvent[];
  close(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connectWithRetry(path: string, timeoutMs: number): Promise<Socket> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(path);
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      });
    } catch (e) {
      lastErr = e;
      await sleep(50);
    } // QEMU has not created the socket yet
  }
  throw new QmpError(
    `cannot connect to QMP socket ${path} within ${timeoutMs}ms: ${(lastErr as Error)?.message}`, 'connect',
  );
}

/** Connects, reads the greeting and enters command mode. */
export async function connectQmp(path: string, timeoutMs = 10_000): Promise<QmpClient> {
  const s = await connectWithRetry(path, timeoutMs);
  const events: QmpEvent[] = [];
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; command: string }>();
  let greeted!: () => void;
  const greeting = new Promise<void>((r) => {
    greeted = r;
  });
  let buf = '';
  s.on('data', (d) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line) as {
        QMP?: unknown; event?: string; id?: number; return?: unknown; error?: { desc: string };
      };
      if (msg.QMP) {
        greeted();
        continue;
      }
      if (msg.event) {
        events.push(msg as QmpEvent);
        continue;
      }
      const p = msg.id !== undefined ? pending.get(msg.id) : undefined;
      if (!p) continue;
      pending.delete(msg.id!);
      if (msg.error) p.reject(new QmpError(`${p.command}: ${msg.error.desc}`, p.command));
      else p.resolve(msg.return);
    }
  });
  s.on('error', () => { /* surfaced through 'close' below */ });
  s.on('close', () => {
    for (const p of pending.values()) p.reject(new QmpError(`${p.command}: QMP connection closed`, p.command));
    pending.clear();
  });
  await greeting;
  let nextId = 1;
  const client: QmpClient = {
    execute: <T>(command: string, args?: Record<string, unknown>) => new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, command });
      s.write(JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}), id }) + '\n');
    }),
    events,
    close: () => s.destroy(),
  };
  await client.execute('qmp_capabilities');
  return client;
}
