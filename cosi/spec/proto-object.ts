// proto-object: one protobuf message <-> the object form of a spec, the form
// controllers read and write and yaml_spec carries. The rules (mirrored by the
// independent Python check, qemu/proto_spec_check.py):
//   - field names in lowerCamelCase (the proto3 JSON names);
//   - enums as the value's name without the enum's prefix, lowercase, _ as -
//     (LAYER_DHCP of Layer -> "dhcp"); the 0 value (*_UNSPECIFIED) is "not set";
//   - google.protobuf.Timestamp as RFC 3339 text in UTC with milliseconds;
//   - 64-bit integers as numbers;
//   - scalars without `optional` are always present (their default when unset);
//     optional scalars, enums, messages, lists and maps are present only when set
//     (lists and maps: when not empty).
// Key order follows the .proto's field order, so equal specs print equally.
import { TIMESTAMP, type FieldInfo, type MessageSet } from './message-info.ts';
import { wireCodec } from './proto-wire.ts';

export { enumValueName } from './message-info.ts';

type Obj = Record<string, unknown>;

/** The conversions of one message, built once per message. */
export interface MessagePlan {
  /**
   * A valid object (checked against the message's schema) -> its object form: defaults filled, empties
   * dropped, keys ordered.
   */
  normalize(o: Obj): Obj;
  encode(o: Obj): Uint8Array;
  decode(bytes: Uint8Array): Obj;
}

function zeroOf(f: FieldInfo): unknown {
  switch (f.kind) {
    case 'string': return '';
    case 'bool': return false;
    case 'bytes': return new Uint8Array(0);
    default: return 0;
  }
}

/** Present only when set: `optional` scalars, enums (0 = unset) and messages. */
const hasPresence = (f: FieldInfo) => !!f.optional || f.kind === 'enum' || f.kind === 'message';

export function messagePlan(set: MessageSet, name: string): MessagePlan {
  const plans = new Map<string, (o: Obj) => Obj>();
  const normalizerOf = (n: string): ((o: Obj) => Obj) => {
    let fn = plans.get(n);
    if (fn) return fn;
    const info = set.messages.get(n);
    if (!info) throw new Error(`message ${n} is not known`);
    const value = (f: FieldInfo, v: unknown): unknown => {
      if (f.kind !== 'message') return v;
      if (f.type === TIMESTAMP) return new Date(Date.parse(v as string)).toISOString();
      return normalizerOf(f.type!)(v as Obj);
    };
    fn = (o) => {
      const out: Obj = {};
      for (const f of info.fields) {
        const v = o[f.key];
        if (f.mapKey) {
          const entries = Object.entries((v ?? {}) as Obj);
          if (entries.length) out[f.key] = Object.fromEntries(entries.map(([k, x]) => [k, value(f, x)]));
        } else if (f.repeated) {
          const arr = (v ?? []) as unknown[];
          if (arr.length) out[f.key] = arr.map((x) => value(f, x));
        } else if (v !== undefined && v !== null) {
          out[f.key] = value(f, v);
        } else if (!hasPresence(f)) {
          out[f.key] = zeroOf(f);
        }
      }
      return out;
    };
    plans.set(n, fn);
    return fn;
  };
  const normalize = normalizerOf(name);
  const wire = wireCodec(set, name);
  return {
    normalize,
    encode: (o) => wire.encode(o),
    decode: (bytes) => normalize(wire.decode(bytes)),
  };
}
