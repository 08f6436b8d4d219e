// log-sink: the machine's logs sent to collectors named by LogSinks (config), as JSON lines over TCP
// or UDP, from the moment a sink is declared. Over TCP the newest lines wait in a bounded buffer while
// the collector is away (reconnecting at 1 s, doubling to 30 s); what overflows is counted. Each sink's
// progress is its LogSinkStatus (runtime), written when its state changes and at most every 2 s else.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, isIPv6, type Socket } from 'node:net';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import { upsert } from '../../../cosi/state/upsert.ts';
import { sameSpec } from '../../../cosi/spec/spec-equal.ts';
import type { Controller } from '../../../cosi/controller/contract.ts';
import type { Logger } from '../../../machinery/log.ts';
import { type LogSinkSpec, type LogSinkStatusSpec } from '../../../machinery/model/runtime-types.ts';
import { KERNEL_SOURCE, type LogBook, type LogCursor, type LogEntry } from './book.ts';
import { CONFIG_NS, LOG_SINK_STATUS_TYPE, LOG_SINK_TYPE, RUNTIME_NS } from '../../../proto/gen/resource-types.ts';

export const DEFAULT_SINK_BUFFER = 1000;
const RETRY_MS = { first: 1000, max: 30_000 };
const STATUS_EVERY_MS = 2000;

/** One JSON line: what a collector gets. */
export const sinkLine = (source: string, e: LogEntry) => `${JSON.stringify({
  time: new Date(e.time).toISOString(), source, level: e.level, message: e.message, seq: e.seq,
})}\n`;

/** tcp://HOST:PORT or udp://HOST:PORT, the host unbracketed. */
export function parseSinkEndpoint(endpoint: string): { protocol: 'tcp' | 'udp'; host: string; port: number } {
  const m = /^(tcp|udp):\/\/(\[[^\]]+\]|[^:/]+):(\d{1,5})$/.exec(endpoint);
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65535) throw new Error(`${endpoint}: not tcp://HOST:PORT or udp://HOST:PORT`);
  return { protocol: m[1] as 'tcp' | 'udp', host: m[2]!.replace(/^\[|\]$/g, ''), port };
}

/** Sends one sink's lines; `status` is called with each change worth publishing. */
class SinkSender {
  private readonly queue: string[] = [];
  private socket: Socket | undefined;
  private udp: UdpSocket | undefined;
  private retry: NodeJS.Timeout | undefined;
  private delay = RETRY_MS.first;
  private stopped = false;
  /** The socket said wait ('drain'): lines stay queued until it drains. */
  private draining = false;
  private stopFollowing: (() => void)[] = [];
  readonly counts = { sent: 0, dropped: 0 };
  state: LogSinkStatusSpec['state'] = 'waiting';
  error = '';

  constructor(
    private readonly spec: LogSinkSpec, book: LogBook, private readonly changed: () => void,
  ) {
    const target = parseSinkEndpoint(spec.endpoint);
    const wanted = (source: string) =>
      (spec.sources?.length ? spec.sources.includes(source) : source !== KERNEL_SOURCE);
    this.stopFollowing.push(book.followAll((source, e) => {
      if (wanted(source)) this.push(sinkLine(source, e));
    }));
    if (spec.sources?.includes(KERNEL_SOURCE)) {
      const kernel: LogCursor | undefined = book.open(KERNEL_SOURCE);
      kernel?.follow((e) => this.push(sinkLine(KERNEL_SOURCE, e)));
      if (kernel) this.stopFollowing.push(() => kernel.close());
    }
    if (target.protocol === 'udp') this.startUdp(target);
    else this.connectTcp(target);
  }

  private get max() { return this.spec.bufferLines || DEFAULT_SINK_BUFFER; }

  private push(line: string): void {
    if (this.stopped) return;
    if (this.udp) {
      this.sendUdp(line);
      return;
    }
    this.queue.push(line);
    if (this.queue.length > this.max) {
      this.queue.shift();
      this.counts.dropped++;
    }
    this.flush();
  }

  private flush(): void {
    const s = this.socket;
    if (!s || this.state !== 'sending' || this.draining) return;
    while (this.queue.length) {
      const line = this.queue.shift()!;
      this.counts.sent++;
      // Backpressure: the rest waits for 'drain' (still counted against the buffer).
      if (!s.write(line)) {
        this.draining = true;
        s.once('drain', () => {
          this.draining = false;
          this.flush();
        });
        return;
      }
    }
  }

  private connectTcp(t: { host: string; port: number }): void {
    if (this.stopped) return;
    const s = connect({ host: t.host, port: t.port });
    s.setNoDelay(true);
    s.on('connect', () => {
      this.socket = s;
      this.state = 'sending';
      this.error = '';
      this.delay = RETRY_MS.first;
      this.changed();
      this.flush();
    });
    // A collector that talks back is not listened to; one that closes is reconnected to.
    s.on('data', () => {});
    s.on('error', (e) => {
      this.error = `${t.host}:${t.port}: ${e.message}`;
    });
    s.on('close', () => {
      if (this.socket === s) this.socket = undefined;
      this.draining = false;
      if (this.stopped) return;
      this.state = 'waiting';
      this.error ||= `${t.host}:${t.port}: the collector closed the connection`;
      this.changed();
      this.retry = setTimeout(() => this.connectTcp(t), this.delay);
      this.delay = Math.min(this.delay * 2, RETRY_MS.max);
    });
  }

  private startUdp(t: { host: string; port: number }): void {
    const u = createSocket(isIPv6(t.host) ? 'udp6' : 'udp4');
    u.on('error', (e) => {
      this.error = e.message;
      this.changed();
    });
    u.connect(t.port, t.host, () => {
      this.state = 'sending';
      this.changed();
    });
    this.udp = u;
  }

  private sendUdp(line: string): void {
    if (this.state !== 'sending') {
      this.counts.dropped++;
      return;
    }
    this.udp!.send(line.slice(0, -1), (e) => {
      if (e) {
        this.counts.dropped++;
        this.error = e.message;
      } else this.counts.sent++;
    });
  }

  status(): LogSinkStatusSpec {
    return {
      state: this.state, endpoint: this.spec.endpoint, sent: this.counts.sent, buffered: this.queue.length,
      dropped: this.counts.dropped, error: this.state === 'sending' ? '' : this.error,
    };
  }

  stop(): void {
    this.stopped = true;
    for (const f of this.stopFollowing) f();
    clearTimeout(this.retry);
    this.socket?.destroy();
    this.udp?.close();
  }
}

/**
 * Runs a sender per LogSink, replacing it when its spec changes, and keeps their statuses: a controller of the
 * engine's (engine-controllers.ts). Level-triggered, so the sinks of a config loaded before it started send too.
 */
export function logSinks(o: { state: MemoryState; book: LogBook; owner: string; log: Logger }): Controller {
  const senders = new Map<string, { spec: LogSinkSpec; sender: SinkSender }>();
  /** Sinks whose sender could not be made, with the spec that failed: said once, tried again when it changes. */
  const refused = new Map<string, LogSinkSpec>();
  const dirty = new Set<string>();
  const publish = async () => {
    for (const id of [...dirty]) {
      dirty.delete(id);
      const s = senders.get(id);
      const p = { namespace: RUNTIME_NS, type: LOG_SINK_STATUS_TYPE, id };
      try {
        if (s) await upsert(o.state, p, s.sender.status(), o.owner);
        else if (o.state.findSync(p)) await o.state.destroy(p, { owner: o.owner });
      } catch (e) { o.log.warn(`log sink ${id}: status: ${(e as Error).message}`); }
    }
  };
  const reconcile = (wanted: ReadonlyMap<string, LogSinkSpec>) => {
    for (const [id, s] of senders) {
      const spec = wanted.get(id);
      if (spec && sameSpec(s.spec, spec)) continue;
      s.sender.stop();
      senders.delete(id);
      dirty.add(id);
      if (!spec) o.log.info(`log sink ${id}: removed`);
    }
    for (const id of refused.keys()) if (!wanted.has(id)) refused.delete(id);
    for (const [id, spec] of wanted) {
      if (senders.has(id) || (refused.has(id) && sameSpec(refused.get(id), spec))) continue;
      refused.delete(id);
      dirty.add(id);
      try {
        const sender = new SinkSender(spec, o.book, () => {
          dirty.add(id);
          void publish();
        });
        senders.set(id, { spec, sender });
        o.log.info(`log sink ${id}: sending to ${spec.endpoint}`);
      } catch (err) {
        refused.set(id, spec);
        o.log.warn(`log sink ${id}: ${(err as Error).message}`);
      }
    }
    void publish();
  };
  return {
    name: 'log-sinks', owner: o.owner,
    inputs: () => [{ namespace: CONFIG_NS, type: LOG_SINK_TYPE, kind: 'weak' }],
    outputs: () => [{ type: LOG_SINK_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      // Counters move with every line: written every 2 s, not per line.
      const ticker = setInterval(() => {
        for (const id of senders.keys()) dirty.add(id);
        void publish();
      }, STATUS_EVERY_MS);
      ticker.unref();
      try {
        while (await ctx.next()) {
          const sinks = await ctx.state.list({ namespace: CONFIG_NS, type: LOG_SINK_TYPE });
          reconcile(new Map(sinks.map((r) => [r.metadata.id, r.spec as LogSinkSpec])));
        }
      } finally {
        clearInterval(ticker);
        for (const s of senders.values()) s.sender.stop();
        senders.clear();
      }
    },
  };
}
