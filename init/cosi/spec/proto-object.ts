// proto-object: one protobuf message type <-> the object form of a spec, the form
// controllers read and write and yaml_spec carries. The rules (mirrored by the
// independent Python check, qemu/proto-spec_check.py):
//   - field names in lowerCamelCase (the proto3 JSON names);
//   - enums as the value's name without the enum's prefix, lowercase, _ as -
//     (LAYER_DHCP of Layer -> "dhcp"); the 0 value (*_UNSPECIFIED) is "not set";
//   - google.protobuf.Timestamp as RFC 3339 text in UTC with milliseconds;
//   - 64-bit integers as numbers;
//   - scalars without `optional` are always present (their default when unset);
//     optional scalars, enums, messages, lists and maps are present only when set
//     (lists and maps: when not empty).
// Key order follows the .proto's field order, so equal specs print equally.
import protobuf from 'protobufjs';

const TIMESTAMP = '.google.protobuf.Timestamp';

/** FOO_BAR_BAZ of enum FooBar -> "baz" (scripts/gen-proto.ts generates the same names). */
export function enumValueName(enumName: string, value: string): string {
  const prefix = `${enumName.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}_`;
  return (value.startsWith(prefix) ? value.slice(prefix.length) : value).toLowerCase().replace(/_/g, '-');
}

type Obj = Record<string, unknown>;

interface FieldPlan {
  /** The key in the object form (lowerCamelCase). */
  key: string;
  /** The field's name in protobufjs messages (as the descriptor spells it). */
  name: string;
  repeated: boolean;
  map: boolean;
  /** proto3 `optional` (or a message): absent unless set. */
  presence: boolean;
  /** What an unset scalar without presence reads as. */
  zero: unknown;
  long: boolean;
  kind: 'scalar' | 'enum' | 'message' | 'timestamp';
  enumShort?: ReadonlyMap<number, string>;
  enumNumber?: ReadonlyMap<string, number>;
  message?: () => MessagePlan;
}

/** The conversions of one message type, built once per type. */
export interface MessagePlan {
  readonly type: protobuf.Type;
  /** A decoded message (protobufjs) -> the object form. */
  fromMessage(m: Obj): Obj;
  /** The object form -> what protobufjs encodes (enum numbers, timestamp messages). */
  toMessage(o: Obj): Obj;
  /** A valid object (checked against the type's schema) -> its object form: defaults filled, empties dropped, keys ordered. */
  normalize(o: Obj): Obj;
  encode(o: Obj): Uint8Array;
  decode(bytes: Uint8Array): Obj;
}

function zeroOf(f: protobuf.Field): unknown {
  switch (f.type) {
    case 'string': return '';
    case 'bool': return false;
    case 'bytes': return new Uint8Array(0);
    default: return 0;
  }
}

const toNumber = (v: unknown): unknown => (v !== null && typeof v === 'object' && 'toNumber' in v ? (v as { toNumber(): number }).toNumber() : v);

function timestampText(m: Obj): string {
  const ms = Number(toNumber(m.seconds) ?? 0) * 1000 + Math.floor(Number(m.nanos ?? 0) / 1e6);
  return new Date(ms).toISOString();
}

function timestampMessage(text: string): Obj {
  const ms = Date.parse(text);
  return { seconds: Math.floor(ms / 1000), nanos: (((ms % 1000) + 1000) % 1000) * 1e6 };
}

const plans = new WeakMap<protobuf.Type, MessagePlan>();

/** The plan of a resolved message type (cached per type). */
export function messagePlan(type: protobuf.Type): MessagePlan {
  const cached = plans.get(type);
  if (cached) return cached;
  type.resolveAll();
  const fields: FieldPlan[] = type.fieldsArray.map((f) => {
    const r = f.resolvedType;
    const base = { key: protobuf.util.camelCase(f.name), name: f.name, repeated: f.repeated, map: f.map, long: f.long, zero: zeroOf(f) };
    if (r instanceof protobuf.Enum) {
      const short = new Map<number, string>();
      const num = new Map<string, number>();
      for (const [k, n] of Object.entries(r.values)) {
        if (n === 0 || short.has(n)) continue;
        short.set(n, enumValueName(r.name, k));
        num.set(enumValueName(r.name, k), n);
      }
      return { ...base, presence: true, kind: 'enum' as const, enumShort: short, enumNumber: num };
    }
    if (r instanceof protobuf.Type) {
      if (r.fullName === TIMESTAMP) return { ...base, presence: true, kind: 'timestamp' as const };
      return { ...base, presence: true, kind: 'message' as const, message: () => messagePlan(r) };
    }
    return { ...base, presence: f.hasPresence, kind: 'scalar' as const };
  });

  const valueFrom = (f: FieldPlan, v: unknown): unknown => {
    switch (f.kind) {
      case 'enum': return f.enumShort!.get(v as number);
      case 'timestamp': return timestampText(v as Obj);
      case 'message': return f.message!().fromMessage(v as Obj);
      default: return f.long ? toNumber(v) : v;
    }
  };
  const valueTo = (f: FieldPlan, v: unknown): unknown => {
    switch (f.kind) {
      case 'enum': return f.enumNumber!.get(v as string) ?? 0;
      case 'timestamp': return timestampMessage(v as string);
      case 'message': return f.message!().toMessage(v as Obj);
      default: return v;
    }
  };
  const valueNormal = (f: FieldPlan, v: unknown): unknown => {
    switch (f.kind) {
      case 'timestamp': return new Date(Date.parse(v as string)).toISOString();
      case 'message': return f.message!().normalize(v as Obj);
      default: return v;
    }
  };

  const plan: MessagePlan = {
    type,
    fromMessage(m) {
      const o: Obj = {};
      for (const f of fields) {
        const v = m[f.name];
        if (f.map) {
          const entries = Object.entries((v ?? {}) as Obj);
          if (entries.length) o[f.key] = Object.fromEntries(entries.map(([k, x]) => [k, valueFrom(f, x)]));
        } else if (f.repeated) {
          const arr = (v ?? []) as unknown[];
          if (arr.length) o[f.key] = arr.map((x) => valueFrom(f, x));
        } else if (f.kind === 'enum') {
          const s = f.enumShort!.get(v as number);
          if (s !== undefined) o[f.key] = s;
        } else if (f.presence) {
          if (v !== null && v !== undefined && Object.prototype.hasOwnProperty.call(m, f.name)) o[f.key] = valueFrom(f, v);
        } else {
          o[f.key] = v === undefined || v === null ? f.zero : valueFrom(f, v);
        }
      }
      return o;
    },
    toMessage(o) {
      const m: Obj = {};
      for (const f of fields) {
        const v = o[f.key];
        if (v === undefined || v === null) continue;
        if (f.map) m[f.name] = Object.fromEntries(Object.entries(v as Obj).map(([k, x]) => [k, valueTo(f, x)]));
        else if (f.repeated) m[f.name] = (v as unknown[]).map((x) => valueTo(f, x));
        else m[f.name] = valueTo(f, v);
      }
      return m;
    },
    normalize(o) {
      const out: Obj = {};
      for (const f of fields) {
        const v = o[f.key];
        if (f.map) {
          const entries = Object.entries((v ?? {}) as Obj);
          if (entries.length) out[f.key] = Object.fromEntries(entries.map(([k, x]) => [k, valueNormal(f, x)]));
        } else if (f.repeated) {
          const arr = (v ?? []) as unknown[];
          if (arr.length) out[f.key] = arr.map((x) => valueNormal(f, x));
        } else if (v !== undefined && v !== null) {
          out[f.key] = valueNormal(f, v);
        } else if (!f.presence) {
          out[f.key] = f.zero;
        }
      }
      return out;
    },
    encode: (o) => type.encode(plan.toMessage(o)).finish(),
    decode: (bytes) => plan.fromMessage(type.decode(bytes) as unknown as Obj),
  };
  plans.set(type, plan);
  return plan;
}
