// api-interceptors: what every call on the users' port passes through, in one place, in
// this order around each method: the gate (the role table: may this caller make this call
// at all), then the latency of unary calls by RPC or the quota of watches, then the audit
// log (every write, every change of the machine config, every refusal), then the method.
// The per-type half of the role table is no link but the State service's access hook
// (userAccess, below): only the service knows a write's type at the moment it is checked.
import type { Http2Session } from 'node:http2';
import { HistogramSet } from '../../../cosi/histogram.ts';
import { Status } from '../../../cosi/remote/grpc/framing.ts';
import { GrpcError, type CallContext, type Method } from '../../../cosi/remote/grpc/server.ts';
import { requestPointer } from '../../../cosi/remote/request-pointer.ts';
import type { CallAccess } from '../../../cosi/remote/server.ts';
import { STATE_METHODS, stateMethodAt } from '../../../cosi/remote/service.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import type { Logger } from '../../../machinery/log.ts';
import {
  callDenied, MAINTENANCE_WHY, rpcRule, type Caller, type Need, type RpcRule,
} from '../../../machinery/model/access.ts';
import type { ApiLimits } from '../../../machinery/model/security-types.ts';
import { CONFIG_RPC } from '../../../machinery/model/service-wire.ts';
import { callerOf, describeCaller, REFUSE_ALL } from './caller.ts';
import { msSinceStart } from '../../../cosi/monotonic.ts';

/** One call as the links see it. */
interface Call {
  /** The RPC as the audit log and the metrics name it: State/Get, ConfigService/ApplyConfig. */
  rpc: string;
  request: Buffer;
  ctx: CallContext;
}

/** A link of the chain: refuses the call (throws) or runs the rest of it (`next`), and may look at the outcome. */
type Interceptor = <T>(call: Call, next: () => Promise<T>) => Promise<T>;

type Audit = (caller: Caller | undefined, rpc: string, what: string, ok: boolean, error?: string) => void;

interface Watches { total: number; bySession: WeakMap<Http2Session, number> }

export interface InterceptorOptions {
  log: Logger;
  /**
   * Where audit lines go (the engine's "audit" log source: `cosictl logs audit`), not the console, which keeps
   * one summary line per change. Default: `log`'s info.
   */
  audit?: (line: string, ok: boolean) => void;
  /** Read per call: the engine's limits may change. */
  limits: () => ApiLimits;
}

export interface UserCalls {
  /** The users' methods as served, each inside the chain. */
  methods: ReadonlyMap<string, Method>;
  /** Watches open now. */
  watches(): number;
  /** How long users' unary calls took, by RPC. */
  latency: HistogramSet;
}

// Maintenance mode lets anyone connect: it may read what MAINTENANCE_READABLE lists and apply a config, no more.
const MAINTENANCE_REFUSES: readonly Need[] = ['view', 'write', 'operate', 'admin'];

/** Puts each of `methods` inside the chain; a method without a line in the role table fails the start. */
export function interceptUserMethods(methods: Iterable<[string, Method]>, o: InterceptorOptions): UserCalls {
  const sink = o.audit ?? ((line: string) => o.log.info(line));
  const audit: Audit = (caller, rpc, what, ok, error) => {
    sink(`audit: ${describeCaller(caller)} rpc=${rpc} ${what} result=${ok ? 'ok' : `denied: ${error}`}`, ok);
  };
  const watches: Watches = { total: 0, bySession: new WeakMap() };
  const latency = new HistogramSet();
  const served = new Map<string, Method>();
  for (const [path, m] of methods) {
    const rule = rpcRule(path);
    if (!rule) throw new Error(`${path} is served to users but has no line in the role table (model/access.ts)`);
    const links = [gate(rule, audit)];
    if (m.kind === 'unary') links.push(timed(latency));
    else if (path === STATE_METHODS.Watch.path) links.push(watchQuota(watches, o.limits));
    const audited = auditLink(path, rule, audit);
    if (audited) links.push(audited);
    served.set(path, chain(path, m, links));
  }
  return { methods: served, watches: () => watches.total, latency };
}

/**
 * The State service's access hook for users: the role table per type (api/access.ts) for the caller of the call's
 * connection. The one check that is no link of the chain: a Create's or an Update's type, and whether an Update
 * touches finalizers only, are known inside the service alone (cosi/remote/server.ts says why).
 */
export function userAccess(accessOf: (caller: Caller) => CallAccess): (ctx: CallContext) => CallAccess {
  return (ctx) => {
    const c = callerOf(ctx.session);
    return c ? accessOf(c) : REFUSE_ALL;
  };
}

/** `m` with `links` around it, the first outermost. Each link starts the next at once, before any await. */
function chain(path: string, m: Method, links: readonly Interceptor[]): Method {
  const rpc = path.replace(/^\/[^/]*\./, '');
  const run = <T>(call: Call, method: () => Promise<T>): Promise<T> =>
    links.reduceRight<() => Promise<T>>((next, link) => () => link(call, next), method)();
  if (m.kind === 'unary') {
    return { kind: 'unary', handle: (request, ctx) => run({ rpc, request, ctx }, () => m.handle(request, ctx)) };
  }
  return {
    kind: 'server-stream',
    handle: (request, ctx, out) => run({ rpc, request, ctx }, () => m.handle(request, ctx, out)),
  };
}

/** The role table's word on the call itself, before any type is looked at; a refusal is audited. */
function gate(rule: RpcRule, audit: Audit): Interceptor {
  return async (call, next) => {
    const caller = callerOf(call.ctx.session);
    const why = !caller ? 'unidentified connection' : callDenied(caller, rule)
      ?? (caller.kind === 'maintenance' && MAINTENANCE_REFUSES.includes(rule.need) ? MAINTENANCE_WHY : undefined);
    if (why) {
      audit(caller, call.rpc, '', false, why);
      throw new StateError(caller?.kind === 'refused' ? 'unauthenticated' : 'permission-denied', why);
    }
    return next();
  };
}

/** How long a unary call took, for the metrics endpoint (a call the gate refused is not counted). */
function timed(latency: HistogramSet): Interceptor {
  return async (call, next) => {
    const t0 = msSinceStart();
    try {
      return await next();
    } finally {
      latency.observe(call.rpc, (msSinceStart() - t0) / 1000);
    }
  };
}

/** Watches never end by themselves and each holds memory: so many per connection, so many in all (ApiLimits). */
function watchQuota(watches: Watches, limits: () => ApiLimits): Interceptor {
  return async (call, next) => {
    const session = call.ctx.session;
    const l = limits();
    const mine = watches.bySession.get(session) ?? 0;
    if (mine >= l.maxWatchesPerConnection || watches.total >= l.maxWatches) {
      throw new GrpcError(Status.RESOURCE_EXHAUSTED, mine >= l.maxWatchesPerConnection
        ? `at most ${l.maxWatchesPerConnection} watches per connection (ApiLimits maxWatchesPerConnection)`
        : `the machine serves at most ${l.maxWatches} watches (ApiLimits maxWatches)`);
    }
    watches.bySession.set(session, mine + 1);
    watches.total++;
    try {
      return await next();
    } finally {
      watches.total--;
      watches.bySession.set(session, (watches.bySession.get(session) ?? 1) - 1);
    }
  };
}

/** How a config was applied, for its audit line: a dry run (diff, apply --dry-run) or a try is not a change. */
function howApplied(request: Buffer): string {
  try {
    const r = CONFIG_RPC.applyConfig.request.decode(request);
    return ` mode=${r.mode ?? 'merge'}${r.dryRun ? ' dry-run' : ''}${r.trySeconds ? ` try=${r.trySeconds}s` : ''}`;
  } catch {
    return ''; // a request that does not decode is refused by the method itself
  }
}

/**
 * What the audit log keeps of a call the gate let through: every outcome of a State write (naming its resource) and
 * of a change of the machine config; of a State read, a refusal only (a type the caller may not read). Other calls
 * (logs, processes, upgrades) leave a line only when the gate refuses them.
 */
function auditLink(path: string, rule: RpcRule, audit: Audit): Interceptor | undefined {
  const name = stateMethodAt(path);
  const changesConfig = rule.need === 'apply-config' || rule.need === 'confirm-config';
  if (!name && !changesConfig) return undefined;
  const every = changesConfig || rule.need === 'write';
  // A request that names no resource (it does not decode) is refused by the method itself, and not audited.
  const what = (call: Call): string | undefined => {
    if (!name) return `resource=machine-config${path === CONFIG_RPC.applyConfig.path ? howApplied(call.request) : ''}`;
    const p = requestPointer(name, call.request);
    return p && `resource=${p.namespace}/${p.type}/${p.id}`;
  };
  return async (call, next) => {
    const record = (ok: boolean, error?: string) => {
      const w = what(call);
      if (w !== undefined) audit(callerOf(call.ctx.session), call.rpc, w, ok, error);
    };
    try {
      const out = await next();
      if (every) record(true);
      return out;
    } catch (e) {
      if (every || (e instanceof StateError && e.code === 'permission-denied')) record(false, (e as Error).message);
      throw e;
    }
  };
}
