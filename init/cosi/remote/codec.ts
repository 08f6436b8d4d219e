// codec: our Resource, events and queries <-> the wire messages (as plain objects
// protobufjs encodes). The rules of shared/cosi-wire.md that clients depend on live
// here: versions as decimal strings ("undefined" in tombstones), a spec on every
// resource, no empty proto_spec, presence of optional fields.
import YAML from 'yaml';
import { OpaqueSpec, type Metadata, type Resource } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import type { LabelOp, LabelQuery, LabelTerm } from '../state/query.ts';
import type { EventType, WatchEvent, WatchOptions } from '../state/state.ts';
import { has } from './proto.ts';
import { PROTO_SPEC_CODECS } from './spec-codecs.ts';

interface WireTimestamp { seconds: number | { toNumber(): number }; nanos: number }
export interface WireMetadata {
  namespace: string; type: string; id: string; version: string; owner: string; phase: string;
  created?: WireTimestamp; updated?: WireTimestamp; finalizers: string[];
  labels: Record<string, string>; annotations: Record<string, string>;
}
export interface WireResource { metadata?: WireMetadata; spec?: { proto_spec?: Uint8Array; yaml_spec?: string } }

const ts = (ms: number): WireTimestamp => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
const fromTs = (t: WireTimestamp | undefined): number => (t ? Number(typeof t.seconds === 'object' ? t.seconds.toNumber() : t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);

export function specToYaml(spec: unknown): string {
  if (spec instanceof OpaqueSpec) return spec.yaml;
  if (spec === null || spec === undefined) return '';
  return YAML.stringify(spec);
}

export function resourceToWire(r: Resource): WireResource {
  const m = r.metadata;
  const spec: WireResource['spec'] = { yaml_spec: specToYaml(r.spec) };
  const proto = r.spec instanceof OpaqueSpec ? r.spec.proto : r.spec !== null && r.spec !== undefined ? PROTO_SPEC_CODECS.get(m.type)?.toProto(r.spec) : undefined;
  if (proto && proto.length) spec.proto_spec = proto;
  return {
    metadata: {
      namespace: m.namespace, type: m.type, id: m.id,
      version: m.version === 0 ? 'undefined' : String(m.version),
      owner: m.owner, phase: m.phase,
      ...(m.version === 0 ? {} : { created: ts(m.created), updated: ts(m.updated) }),
      finalizers: [...m.finalizers], labels: { ...m.labels }, annotations: { ...m.annotations },
    },
    spec,
  };
}

function parseVersion(v: string, where: string): number {
  if (v === '' || v === 'undefined') return 0;
  if (!/^\d+$/.test(v)) throw new StateError('invalid-argument', `${where}: metadata.version "${v}" is not a decimal number`, v);
  return Number(v);
}

function decodeSpec(w: WireResource, where: string): unknown {
  const m = w.metadata!;
  const yamlText = w.spec?.yaml_spec ?? '';
  const proto = w.spec?.proto_spec;
  let yamlValue: unknown = null;
  if (yamlText) {
    try { yamlValue = YAML.parse(yamlText); } catch (e) {
      throw new StateError('invalid-argument', `${where} ${m.type}/${m.id}: yaml_spec is not valid YAML: ${(e as Error).message}`, yamlText.slice(0, 200));
    }
  }
  if (proto && proto.length) {
    const codec = PROTO_SPEC_CODECS.get(m.type);
    return codec ? codec.fromProto(proto, yamlValue) : new OpaqueSpec(new Uint8Array(proto), yamlText);
  }
  return yamlValue;
}

/**
 * lazySpec: parse the spec on first read (clients: a List of 10,000 need not parse
 * 10,000 YAML documents up front). Servers decode eagerly so bad input is refused.
 */
export function resourceFromWire(w: WireResource, where = 'resource', lazySpec = false): Resource {
  if (!w.metadata) throw new StateError('invalid-argument', `${where}: metadata is missing`);
  const m = w.metadata;
  const phase = m.phase === 'tearingDown' ? 'tearingDown' : 'running';
  const metadata: Metadata = {
    namespace: m.namespace, type: m.type, id: m.id, version: parseVersion(m.version ?? '', where),
    owner: m.owner ?? '', phase, created: fromTs(m.created), updated: fromTs(m.updated),
    finalizers: [...(m.finalizers ?? [])], labels: { ...(m.labels ?? {}) }, annotations: { ...(m.annotations ?? {}) },
  };
  if (!lazySpec) return { metadata, spec: decodeSpec(w, where) };
  const r = { metadata } as Resource;
  let value: unknown;
  let parsed = false;
  Object.defineProperty(r, 'spec', {
    enumerable: true, configurable: true,
    get: () => { if (!parsed) { value = decodeSpec(w, where); parsed = true; } return value; },
    set: (v: unknown) => { value = v; parsed = true; },
  });
  return r;
}

// --- label queries: the wire enum numbers
const OPS: LabelOp[] = ['exists', 'equal', 'exists' /* NOT_EXISTS */, 'in', 'lt', 'lte', 'lt-numeric', 'lte-numeric'];
const OP_NUMBER: Record<LabelOp, number> = { 'exists': 0, 'equal': 1, 'in': 3, 'lt': 4, 'lte': 5, 'lt-numeric': 6, 'lte-numeric': 7 };
interface WireTerm { key: string; op: number; value: string[]; invert: boolean }

export function labelQueriesFromWire(qs: { terms: WireTerm[] }[] | undefined): LabelQuery[] {
  return (qs ?? []).map((q) => ({
    terms: (q.terms ?? []).map((t): LabelTerm => {
      const op = OPS[t.op];
      if (op === undefined) throw new StateError('unimplemented', `unsupported label term operator ${t.op} on "${t.key}"`, String(t.op));
      const notExists = t.op === 2; // deprecated NOT_EXISTS = inverted EXISTS
      return { key: t.key, op, value: [...(t.value ?? [])], invert: notExists ? !t.invert : !!t.invert };
    }),
  }));
}

export function labelQueriesToWire(qs: readonly LabelQuery[] | undefined): { terms: WireTerm[] }[] {
  return (qs ?? []).map((q) => ({ terms: q.terms.map((t) => ({ key: t.key, op: OP_NUMBER[t.op], value: [...t.value], invert: !!t.invert })) }));
}

// --- events
const EVENT_NUMBER: Record<EventType, number> = { created: 0, updated: 1, destroyed: 2, bootstrapped: 3, errored: 4, noop: 5 };
const EVENT_TYPES: EventType[] = ['created', 'updated', 'destroyed', 'bootstrapped', 'errored', 'noop'];

export interface WireEvent { resource?: WireResource; event_type: number; old?: WireResource; error?: string; bookmark?: Uint8Array }

/** The reference encoding of an event. The server frames events by hand around cached
 * resource bytes (server.ts encodeWatchResponse); the tests check both agree. */
export function eventToWire(e: WatchEvent): WireEvent {
  return {
    resource: resourceToWire(e.resource),
    event_type: EVENT_NUMBER[e.type],
    ...(e.old ? { old: resourceToWire(e.old) } : {}),
    ...(e.error !== undefined ? { error: e.error } : {}),
    ...(e.bookmark ? { bookmark: e.bookmark } : {}),
  };
}

export function eventFromWire(w: WireEvent, lazySpec = false): WatchEvent {
  const type = EVENT_TYPES[w.event_type];
  if (!type) throw new StateError('internal', `unknown event type ${w.event_type}`);
  return {
    type,
    resource: resourceFromWire(w.resource ?? {}, 'event', lazySpec),
    ...(w.old && has(w, 'old') ? { old: resourceFromWire(w.old, 'event old', lazySpec) } : {}),
    ...(has(w, 'error') ? { error: w.error } : {}),
    ...(has(w, 'bookmark') && w.bookmark ? { bookmark: new Uint8Array(w.bookmark) } : {}),
  };
}

export interface WireWatchOptions {
  bootstrap_contents: boolean; tail_events: number; label_query: { terms: WireTerm[] }[]; id_query?: { regexp: string };
  aggregated: boolean; start_from_bookmark?: Uint8Array; bootstrap_bookmark: boolean;
}

export function watchOptionsFromWire(o: WireWatchOptions | undefined): WatchOptions {
  if (!o) return {};
  return {
    bootstrapContents: o.bootstrap_contents, tailEvents: o.tail_events, aggregated: o.aggregated, bootstrapBookmark: o.bootstrap_bookmark,
    labelQueries: labelQueriesFromWire(o.label_query),
    ...(o.id_query?.regexp ? { idQuery: o.id_query.regexp } : {}),
    ...(has(o, 'start_from_bookmark') && o.start_from_bookmark ? { startFromBookmark: new Uint8Array(o.start_from_bookmark) } : {}),
  };
}

export function watchOptionsToWire(o: WatchOptions): Partial<WireWatchOptions> {
  return {
    bootstrap_contents: !!o.bootstrapContents, tail_events: o.tailEvents ?? 0, aggregated: !!o.aggregated,
    bootstrap_bookmark: !!o.bootstrapBookmark, label_query: labelQueriesToWire(o.labelQueries),
    ...(o.idQuery ? { id_query: { regexp: o.idQuery } } : {}),
    ...(o.startFromBookmark ? { start_from_bookmark: o.startFromBookmark } : {}),
  };
}
