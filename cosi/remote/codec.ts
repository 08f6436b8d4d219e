// codec: our Resource, events and queries <-> the wire messages (as the plain objects
// wire.ts encodes). The rules of shared/cosi-wire.md that clients depend on live
// here: versions as decimal strings ("undefined" in tombstones), a spec on every
// resource, no empty proto_spec, presence of optional fields.
import { OpaqueSpec, type Metadata, type Resource } from '../resource/resource.ts';
import { StateError } from '../state/errors.ts';
import { deepFreeze } from '../state/freeze.ts';
import type { LabelOp, LabelQuery, LabelTerm } from '../state/query.ts';
import type { EventType, WatchEvent, WatchOptions } from '../state/state.ts';
import { FREE_FORM, type SpecCodec, type SpecCodecs } from '../spec/spec-codec.ts';
import { specDifferences } from '../spec/spec-equal.ts';
import { has } from './wire.ts';
import type { PreEncoded } from '../spec/proto-wire.ts';
import { MAX_FLOW_DEPTH, MAX_YAML_DOCUMENT_BYTES, parseUntrustedYaml } from '../spec/yaml-guard.ts';

/** A google.protobuf.Timestamp as wire.ts has it: milliseconds since the epoch. */
type WireTimestamp = number;
export interface WireMetadata {
  namespace: string; type: string; id: string; version: string; owner: string; phase: string;
  created?: WireTimestamp; updated?: WireTimestamp; finalizers: string[];
  labels: Record<string, string>; annotations: Record<string, string>;
}
export interface WireResource { metadata?: WireMetadata; spec?: { proto_spec?: Uint8Array; yaml_spec?: string } }

const ts = (ms: number): WireTimestamp => ms;
const fromTs = (t: WireTimestamp | undefined): number => t ?? 0;

/** A type's codec; a type nobody describes travels as free-form YAML. */
const codecOf = (codecs: SpecCodecs, type: string): SpecCodec => codecs.get(type) ?? FREE_FORM;

export function resourceToWire(r: Resource, codecs: SpecCodecs): WireResource {
  const m = r.metadata;
  let spec: WireResource['spec'];
  if (r.spec instanceof OpaqueSpec) {
    spec = { yaml_spec: r.spec.yaml, ...(r.spec.proto?.length ? { proto_spec: r.spec.proto } : {}) };
  } else if (r.spec === null || r.spec === undefined) {
    spec = { yaml_spec: '' };
  } else {
    const codec = codecOf(codecs, m.type);
    const proto = codec.toProto(r.spec);
    spec = { yaml_spec: codec.toYaml(r.spec), ...(proto?.length ? { proto_spec: proto } : {}) };
  }
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
  if (!/^\d+$/.test(v)) {
    throw new StateError('invalid-argument', `${where}: metadata.version "${v}" is not a decimal number`, v);
  }
  return Number(v);
}

/** What a writer's yaml_spec may be, checked before the YAML parser sees it. */
export interface SpecLimits {
  /** Bytes of a yaml_spec (the parser costs about 0.7 ms per KiB of the event loop). */
  maxYamlBytes: number;
  /** Open [ and { at once; block nesting is bounded by column (yaml-guard.ts). */
  maxDepth: number;
}

export const DEFAULT_SPEC_LIMITS: SpecLimits = { maxYamlBytes: MAX_YAML_DOCUMENT_BYTES, maxDepth: MAX_FLOW_DEPTH };

function parseYamlSpec(text: string, what: string, limits?: SpecLimits): unknown {
  if (limits && text.length > limits.maxYamlBytes) {
    throw new StateError('resource-exhausted', `${what}: yaml_spec is ${text.length} bytes, more than the `
      + `${limits.maxYamlBytes} allowed (send proto_spec, which has no such limit, or raise ApiLimits maxSpecBytes)`);
  }
  // A server's YAML (client side, no limits) is as large as its resource may be.
  const p = parseUntrustedYaml(text, { maxBytes: limits?.maxYamlBytes ?? Infinity, maxDepth: limits?.maxDepth });
  if (!p.ok) throw new StateError('invalid-argument', `${what}: yaml_spec: ${p.message}`, text.slice(0, 200));
  return p.value;
}

/**
 * A spec as a writer sent it (server side): from proto_spec, yaml_spec or both, checked
 * against the type's schema and brought to its object form. Both sent: they must agree.
 */
function admitSpec(w: WireResource, codec: SpecCodec, what: string, limits: SpecLimits): unknown {
  const yamlText = w.spec?.yaml_spec ?? '';
  const proto = w.spec?.proto_spec;
  const hasProto = !!proto?.length;
  const refuse = (problems: string[]) => new StateError('invalid-argument', `${what}: ${problems.join('; ')}`, what);
  const checked = (v: unknown) => {
    const p = codec.validate(v);
    if (p.length) throw refuse(p);
    return codec.normalize(v);
  };
  if (hasProto && !codec.message) {
    // A type without a message of ours: the bytes travel along, untouched; the YAML is what we check.
    if (yamlText) checked(parseYamlSpec(yamlText, what, limits));
    return new OpaqueSpec(new Uint8Array(proto!), yamlText);
  }
  if (hasProto && yamlText && codec.message && !codec.combine) {
    // Our own clients send the YAML our emitter makes of the same object: the same text
    // agrees without parsing it (a YAML parse is most of the cost of a small Update).
    const fromProto = checked(codec.fromProto(proto!));
    if (codec.toYaml(fromProto) === yamlText) return fromProto;
  }
  const fromYaml = yamlText ? checked(parseYamlSpec(yamlText, what, limits)) : undefined;
  if (!codec.message) return fromYaml ?? null;
  // An all-default message encodes to nothing, and an empty proto_spec is never sent.
  const fromProto = hasProto || fromYaml === undefined
    ? checked(codec.fromProto(proto ?? new Uint8Array(0)))
    : undefined;
  if (fromProto === undefined) return fromYaml;
  if (fromYaml === undefined) return fromProto;
  if (codec.combine) {
    const c = codec.combine(fromProto, fromYaml);
    if ('disagree' in c) throw refuse([`proto_spec and yaml_spec disagree: ${c.disagree.join(', ')}`]);
    return c.spec;
  }
  const diff = specDifferences(fromProto, fromYaml);
  if (diff.length) throw refuse([`proto_spec and yaml_spec disagree: ${diff.join(', ')} (proto vs yaml)`]);
  return fromProto;
}

/**
 * A server's yaml_spec (client side): one that is JSON (our server's definitions: jsonYamlText) by JSON.parse,
 * a hundred times faster; any other by the YAML parser. Duplicate keys in a server's JSON: the last one counts.
 */
function parseServerYaml(text: string, what: string): unknown {
  if (text.startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {
      // YAML's flow style ({a: 1}) is no JSON: the YAML parser reads it, or says what is wrong.
    }
  }
  return parseYamlSpec(text, what);
}

/** A spec from the server (client side): the proto when this client knows the message, else the YAML. */
function readSpec(w: WireResource, codec: SpecCodec, what: string): unknown {
  const yamlText = w.spec?.yaml_spec ?? '';
  const proto = w.spec?.proto_spec;
  if (proto?.length && codec.message && codec.combine && yamlText) {
    // The proto carries part of the spec (a definition's extension is in the YAML only).
    const c = codec.combine(codec.fromProto(proto), parseServerYaml(yamlText, what));
    return 'spec' in c ? c.spec : parseServerYaml(yamlText, what);
  }
  if (proto?.length && codec.message) return codec.fromProto(proto);
  if (proto?.length && !yamlText) return new OpaqueSpec(new Uint8Array(proto), '');
  if (!yamlText) {
    return codec.message && w.metadata?.version !== 'undefined' ? codec.fromProto(new Uint8Array(0)) : null;
  }
  return parseServerYaml(yamlText, what);
}

export interface FromWireOptions {
  /** Names the message in errors ("create", "list"). */
  where?: string;
  /** Server: check and normalize the spec as a writer's input. */
  admit?: boolean;
  /** Server: what a writer's yaml_spec may be (default DEFAULT_SPEC_LIMITS). */
  limits?: SpecLimits;
  /** Client: decode the spec on first read (a List of 10,000 need not decode them all). */
  lazy?: boolean;
  /** Client: immutable, as a state's resources are, so that watchers can share it. */
  frozen?: boolean;
}

export function resourceFromWire(w: WireResource, codecs: SpecCodecs, o: FromWireOptions = {}): Resource {
  const where = o.where ?? 'resource';
  if (!w.metadata) throw new StateError('invalid-argument', `${where}: metadata is missing`);
  const m = w.metadata;
  const metadata: Metadata = {
    namespace: m.namespace, type: m.type, id: m.id, version: parseVersion(m.version ?? '', where),
    owner: m.owner ?? '', phase: m.phase === 'tearingDown' ? 'tearingDown' : 'running',
    created: fromTs(m.created), updated: fromTs(m.updated),
    finalizers: m.finalizers ?? [], labels: m.labels ?? {}, annotations: m.annotations ?? {},
  };
  const codec = codecOf(codecs, m.type);
  const what = () => `${m.type} "${m.id}"`;
  const decode = () => (o.admit ? admitSpec(w, codec, what(), o.limits ?? DEFAULT_SPEC_LIMITS)
    : readSpec(w, codec, what()));
  // A protobuf spec decodes in a microsecond or two; only YAML is worth putting off.
  if (!o.lazy || codec.message) {
    const r = { metadata, spec: decode() };
    return o.frozen ? deepFreeze(r) : r;
  }
  // Accessors in the literal: an own, enumerable `spec` (spread copies it) on a shape
  // V8 keeps fast, unlike one added by defineProperty.
  let value: unknown;
  let parsed = false;
  const lazy: Resource = {
    metadata,
    get spec() {
      if (!parsed) {
        value = o.frozen ? deepFreeze(decode()) : decode();
        parsed = true;
      }
      return value;
    },
    set spec(v: unknown) {
      if (o.frozen) {
        throw new TypeError(`${what()}: a resource read from a watch is immutable (copy it to change it)`);
      }
      value = v;
      parsed = true;
    },
  };
  if (o.frozen) {
    deepFreeze(metadata);
    Object.freeze(lazy);
  }
  return lazy;
}

// --- label queries: the wire enum numbers (LabelTerm.Operation; scripts/gen-proto.test.ts checks them)
export const OPS: LabelOp[] = [
  'exists', 'equal', 'exists' /* NOT_EXISTS */, 'in', 'lt', 'lte', 'lt-numeric', 'lte-numeric',
];
export const OP_NUMBER: Record<LabelOp, number> = {
  'exists': 0, 'equal': 1, 'in': 3, 'lt': 4, 'lte': 5, 'lt-numeric': 6, 'lte-numeric': 7,
};
interface WireTerm { key: string; op: number; value: string[]; invert: boolean }

export function labelQueriesFromWire(qs: { terms: WireTerm[] }[] | undefined): LabelQuery[] {
  return (qs ?? []).map((q) => ({
    terms: (q.terms ?? []).map((t): LabelTerm => {
      const op = OPS[t.op];
      if (op === undefined) {
        throw new StateError('unimplemented', `unsupported label term operator ${t.op} on "${t.key}"`, String(t.op));
      }
      const notExists = t.op === 2; // deprecated NOT_EXISTS = inverted EXISTS
      return { key: t.key, op, value: [...(t.value ?? [])], invert: notExists ? !t.invert : !!t.invert };
    }),
  }));
}

export function labelQueriesToWire(qs: readonly LabelQuery[] | undefined): { terms: WireTerm[] }[] {
  return (qs ?? []).map((q) => ({
    terms: q.terms.map((t) => ({ key: t.key, op: OP_NUMBER[t.op], value: [...t.value], invert: !!t.invert })),
  }));
}

// --- events (EventType; scripts/gen-proto.test.ts checks the numbers)
export const EVENT_NUMBER: Record<EventType, number> = {
  created: 0, updated: 1, destroyed: 2, bootstrapped: 3, errored: 4, noop: 5,
};
const EVENT_TYPES: EventType[] = ['created', 'updated', 'destroyed', 'bootstrapped', 'errored', 'noop'];

export interface WireEvent {
  resource?: WireResource; event_type: number; old?: WireResource; error?: string; bookmark?: Uint8Array;
}

/** An event on the wire; the server gives its resources as `preEncoded` bytes it keeps (server.ts). */
export function eventToWire(e: WatchEvent, resource: (r: Resource) => WireResource | PreEncoded): WireEvent {
  return {
    resource: resource(e.resource) as WireResource,
    event_type: EVENT_NUMBER[e.type],
    ...(e.old ? { old: resource(e.old) as WireResource } : {}),
    ...(e.error !== undefined ? { error: e.error } : {}),
    ...(e.bookmark ? { bookmark: e.bookmark } : {}),
  };
}

/** An event as a client reads it: specs decoded on first read; frozen when watchers share it. */
export function eventFromWire(w: WireEvent, codecs: SpecCodecs, lazy = false, frozen = false): WatchEvent {
  const type = EVENT_TYPES[w.event_type];
  if (!type) throw new StateError('internal', `unknown event type ${w.event_type}`);
  const e: WatchEvent = {
    type, resource: resourceFromWire(w.resource ?? {}, codecs, { where: 'event', lazy, frozen }),
  };
  if (w.old && has(w, 'old')) e.old = resourceFromWire(w.old, codecs, { where: 'event old', lazy, frozen });
  if (has(w, 'error')) e.error = w.error!;
  if (has(w, 'bookmark') && w.bookmark) e.bookmark = new Uint8Array(w.bookmark);
  return frozen ? Object.freeze(e) : e;
}

export interface WireWatchOptions {
  bootstrap_contents: boolean; tail_events: number; label_query: { terms: WireTerm[] }[]; id_query?: { regexp: string };
  aggregated: boolean; start_from_bookmark?: Uint8Array; bootstrap_bookmark: boolean;
}

export function watchOptionsFromWire(o: WireWatchOptions | undefined): WatchOptions {
  if (!o) return {};
  return {
    bootstrapContents: o.bootstrap_contents, tailEvents: o.tail_events, aggregated: o.aggregated,
    bootstrapBookmark: o.bootstrap_bookmark,
    labelQueries: labelQueriesFromWire(o.label_query),
    ...(o.id_query?.regexp ? { idQuery: o.id_query.regexp } : {}),
    ...(has(o, 'start_from_bookmark') && o.start_from_bookmark
      ? { startFromBookmark: new Uint8Array(o.start_from_bookmark) }
      : {}),
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
