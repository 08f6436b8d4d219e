// log-service: serves appliance.runtime.v1alpha1.LogService (Logs, LogSources) from the log book,
// next to cosi.resource.State on the users' port.
import type { CallContext, Method, MessageWriter } from '../../../cosi/remote/grpc/server.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import { LOG_RPC } from '../../../machinery/model/service-wire.ts';
import type { LogBook, LogCursor, LogEntry } from './book.ts';

/** Lines a follower may fall behind by; past it the oldest waiting ones go (the client sees a gap in seq). */
const FOLLOW_BEHIND_MAX = 2000;

const encode = (source: string, e: LogEntry) => LOG_RPC.logs.response.encode({
  source, time: new Date(e.time).toISOString(), level: e.level, message: e.message, seq: e.seq,
});

/**
 * Starts keeping the lines that come after the cursor's held ones (at once, so that none falls
 * between), and returns what sends them as they come until the client goes or the server stops.
 */
function collect(source: string, cursor: LogCursor): (ctx: CallContext, out: MessageWriter) => Promise<void> {
  const waiting: LogEntry[] = [];
  let wake: (() => void) | undefined;
  cursor.follow((e) => {
    if (waiting.length >= FOLLOW_BEHIND_MAX) waiting.shift();
    waiting.push(e);
    wake?.();
  });
  return async (ctx, out) => {
    const nudge = () => {
      wake?.();
    };
    ctx.signal.addEventListener('abort', nudge, { once: true });
    try {
      while (!ctx.signal.aborted) {
        if (!waiting.length) {
          await new Promise<void>((r) => {
            wake = r;
          });
          wake = undefined;
          continue;
        }
        for (const e of waiting.splice(0)) await out.write(encode(source, e));
        await out.flush();
      }
    } finally {
      ctx.signal.removeEventListener('abort', nudge);
    }
  };
}

export function logServiceMethods(book: LogBook): Map<string, Method> {
  const names = () => book.sources().map((s) => s.name).join(', ');
  return new Map<string, Method>([
    [LOG_RPC.logs.path, {
      kind: 'server-stream',
      async handle(request, ctx, out) {
        const req = LOG_RPC.logs.request.decode(request);
        const since = req.since ? Date.parse(req.since) : undefined;
        let cursor: LogCursor | undefined;
        try {
          cursor = book.open(req.source);
        } catch (e) {
          throw new StateError('failed-precondition', `cannot read the ${req.source} log: ${(e as Error).message}`,
            undefined, { cause: e });
        }
        if (!cursor) throw new StateError('not-found', `no log source "${req.source}"; there are: ${names()}`);
        try {
          if (req.previous && req.follow) {
            throw new StateError('invalid-argument', 'a previous run has ended: it cannot be followed');
          }
          const run = cursor.previousRun;
          if (req.previous && !run) {
            throw new StateError('failed-precondition', `${req.source} has run once since boot: no previous run`);
          }
          if (req.previous && cursor.held.every((e) => e.seq >= run!.to)) {
            throw new StateError('failed-precondition', `${req.source}'s previous run (lines ${run!.from} to `
              + `${run!.to - 1}) is no longer kept: newer lines took its place in the ring (appliance.log_ring_kib)`);
          }
          const sendNew = req.follow ? collect(req.source, cursor) : undefined;
          const ofRun = req.previous ? cursor.held.filter((e) => e.seq >= run!.from && e.seq < run!.to) : cursor.held;
          let held = since === undefined ? ofRun : ofRun.filter((e) => e.time >= since);
          if (req.tail) held = held.slice(-req.tail);
          for (const e of held) await out.write(encode(req.source, e));
          if (!sendNew) return;
          await out.flush();
          await sendNew(ctx, out);
        } finally {
          cursor.close();
        }
      },
    }],
    [LOG_RPC.logSources.path, {
      kind: 'unary',
      async handle(request) {
        LOG_RPC.logSources.request.decode(request);
        return LOG_RPC.logSources.response.encode({ sources: book.sources() });
      },
    }],
  ]);
}
