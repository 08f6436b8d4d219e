// proto-wire: the object form of a spec <-> protobuf bytes, straight from a message
// table (message-info.ts): proto3 encoding (implicit presence for plain scalars,
// packed repeated numbers, maps as entry messages), decoding that also takes unpacked
// repeated numbers and skips unknown fields. The object form's rules are in
// proto-object.ts; wire-io.ts does the varints. A message field may be given as
// `preEncoded(bytes)`: bytes encoded once and shared by many messages (a resource every
// watcher of a change receives) are written as they are.
import { WireFormatError, WireReader, WireWriter } from './wire-io.ts';
import {
  enumValueName, TIMESTAMP, type FieldInfo, type MessageInfo, type MessageSet, type ScalarKind,
} from './message-info.ts';

type Obj = Record<string, unknown>;

const WIRE: Record<ScalarKind | 'enum' | 'message', number> = {
  int32: 0, uint32: 0, sint32: 0, int64: 0, uint64: 0, sint64: 0, bool: 0, enum: 0,
  fixed64: 1, sfixed64: 1, double: 1, string: 2, bytes: 2, message: 2, fixed32: 5, sfixed32: 5, float: 5,
};

/** A message's bytes, encoded once, to be written as a message field's value as they are. */
export class PreEncoded {
  constructor(readonly bytes: Uint8Array) {}
}
export const preEncoded = (bytes: Uint8Array) => new PreEncoded(bytes);

function writeScalar(w: WireWriter, kind: ScalarKind | 'enum', v: unknown): void {
  switch (kind) {
    case 'string':
      w.string(v as string);
      break;
    case 'bytes':
      w.bytes(v as Uint8Array);
      break;
    case 'bool':
      w.bool(v as boolean);
      break;
    case 'double':
      w.double(v as number);
      break;
    case 'float':
      w.float(v as number);
      break;
    case 'int32': case 'enum':
      w.int32(v as number);
      break;
    case 'uint32':
      w.uint32(v as number);
      break;
    case 'sint32':
      w.sint32(v as number);
      break;
    case 'fixed32':
      w.fixed32(v as number);
      break;
    case 'sfixed32':
      w.sfixed32(v as number);
      break;
    case 'int64':
      w.int64(v as number);
      break;
    case 'uint64':
      w.uint64(v as number);
      break;
    case 'sint64':
      w.sint64(v as number);
      break;
    case 'fixed64':
      w.fixed64(v as number);
      break;
    case 'sfixed64':
      w.sfixed64(v as number);
      break;
  }
}

function readScalar(r: WireReader, kind: ScalarKind | 'enum'): unknown {
  switch (kind) {
    case 'string': return r.string();
    case 'bytes': return r.bytes();
    case 'bool': return r.bool();
    case 'double': return r.double();
    case 'float': return r.float();
    case 'int32': case 'enum': return r.int32();
    case 'uint32': return r.uint32();
    case 'sint32': return r.sint32();
    case 'fixed32': return r.fixed32();
    case 'sfixed32': return r.sfixed32();
    case 'int64': return r.int64();
    case 'uint64': return r.uint64();
    case 'sint64': return r.sint64();
    case 'fixed64': return r.fixed64();
    case 'sfixed64': return r.sfixed64();
  }
}

/** Each scalar kind's proto3 default; an enum's is its 0 value, which reads as unset (absent) in our object form. */
const DEFAULTS: Record<ScalarKind | 'enum', unknown> = {
  string: '', bytes: Buffer.alloc(0), bool: false, double: 0, float: 0, int32: 0, uint32: 0, sint32: 0, fixed32: 0,
  sfixed32: 0, int64: 0, uint64: 0, sint64: 0, fixed64: 0, sfixed64: 0, enum: undefined,
};

const isDefault = (v: unknown) => v === 0 || v === '' || v === false || (v instanceof Uint8Array && v.length === 0);

/** Encoding and decoding of one message's object form, built once per message. */
export interface WireCodec { encode(o: Obj): Buffer; decode(bytes: Uint8Array): Obj }

export interface WireCodecOptions {
  /**
   * Decoded messages have every field that has no presence, at its default when absent ('' / 0 / false / empty
   * bytes, [] and {}), as protobuf's generated code reads them; fields with presence (messages, `optional`)
   * stay absent. Off: absent fields are absent (the spec codecs tell "unset" from a default themselves).
   */
  defaults?: boolean;
}

export function wireCodec(set: MessageSet, messageName: string, options: WireCodecOptions = {}): WireCodec {
  const cache = new Map<string, MessagePlan>();
  const planOf = (n: string): MessagePlan => {
    let p = cache.get(n);
    if (!p) {
      const info = set.messages.get(n);
      if (!info) throw new Error(`message ${n} is not in the set`);
      p = new MessagePlan(info, set, planOf, options.defaults ?? false);
      cache.set(n, p);
    }
    return p;
  };
  const top = planOf(messageName);
  return {
    encode: (o) => {
      const w = new WireWriter();
      top.write(w, o);
      return w.finish();
    },
    decode: (bytes) => top.read(new WireReader(bytes), bytes.length),
  };
}

interface EnumMaps { toNumber: Map<string, number>; toName: Map<number, string> }

class MessagePlan {
  private readonly byNumber = new Map<number, FieldInfo>();
  private readonly enums = new Map<string, EnumMaps>();

  constructor(
    private readonly info: MessageInfo, private readonly set: MessageSet,
    private readonly planOf: (n: string) => MessagePlan, private readonly defaults: boolean,
  ) {
    for (const f of info.fields) {
      this.byNumber.set(f.number, f);
      if (f.kind === 'enum' && f.type && !this.enums.has(f.type)) {
        const e = set.enums.get(f.type);
        if (!e) throw new Error(`${info.name}.${f.name}: enum ${f.type} is not in the set`);
        const toNumber = new Map<string, number>();
        const toName = new Map<number, string>();
        for (const v of e.values) {
          if (v.number === 0 || toName.has(v.number)) continue;
          const short = enumValueName(e.name, v.name);
          toNumber.set(short, v.number);
          toName.set(v.number, short);
        }
        this.enums.set(f.type, { toNumber, toName });
      }
    }
  }

  private value(f: FieldInfo, v: unknown): unknown {
    if (f.kind === 'enum') return this.enums.get(f.type!)!.toNumber.get(v as string) ?? 0;
    if (f.kind === 'message' && f.type === TIMESTAMP) {
      const ms = Date.parse(v as string);
      return { seconds: Math.floor(ms / 1000), nanos: (((ms % 1000) + 1000) % 1000) * 1e6 };
    }
    return v;
  }

  private writeOne(w: WireWriter, f: FieldInfo, v: unknown): void {
    if (v instanceof PreEncoded) {
      w.uint32((f.number << 3) | 2).bytes(v.bytes);
      return;
    }
    if (f.kind === 'message') {
      w.uint32((f.number << 3) | 2).fork();
      this.planOf(f.type!).write(w, this.value(f, v) as Obj);
      w.ldelim();
      return;
    }
    w.uint32((f.number << 3) | WIRE[f.kind]);
    writeScalar(w, f.kind, this.value(f, v));
  }

  write(w: WireWriter, o: Obj): void {
    for (const f of this.info.fields) {
      const v = o[f.key];
      if (v === undefined || v === null) continue;
      if (f.mapKey) {
        for (const [k, x] of Object.entries(v as Obj)) {
          w.uint32((f.number << 3) | 2).fork();
          w.uint32((1 << 3) | WIRE[f.mapKey]);
          writeScalar(w, f.mapKey, f.mapKey === 'string' ? k : Number(k));
          this.writeOne(w, { ...f, number: 2 }, x);
          w.ldelim();
        }
      } else if (f.repeated) {
        const arr = v as unknown[];
        if (!arr.length) continue;
        if (WIRE[f.kind] !== 2) { // packed
          w.uint32((f.number << 3) | 2).fork();
          for (const x of arr) writeScalar(w, f.kind as ScalarKind | 'enum', this.value(f, x));
          w.ldelim();
        } else for (const x of arr) this.writeOne(w, f, x);
      } else if (f.kind === 'message' || f.optional) {
        this.writeOne(w, f, v);
      } else {
        const x = this.value(f, v);
        if (!isDefault(x)) this.writeOne(w, f, v);
      }
    }
  }

  private readOne(r: WireReader, f: FieldInfo): unknown {
    if (f.kind === 'message') {
      const len = r.uint32();
      const m = this.planOf(f.type!).read(r, len);
      if (f.type === TIMESTAMP) {
        return new Date(Number(m.seconds ?? 0) * 1000 + Math.floor(Number(m.nanos ?? 0) / 1e6)).toISOString();
      }
      return m;
    }
    const v = readScalar(r, f.kind);
    if (f.kind !== 'enum') return v;
    return this.enums.get(f.type!)!.toName.get(v as number);
  }

  /** Reads `length` bytes into the raw object form (fields by key; absent ones absent). */
  read(r: WireReader, length: number): Obj {
    const end = r.pos + length;
    const o: Obj = {};
    while (r.pos < end) {
      const tag = r.uint32();
      const f = this.byNumber.get(tag >>> 3);
      if (!f) {
        r.skipType(tag & 7);
        continue;
      }
      if (f.mapKey) {
        const entryEnd = r.uint32() + r.pos;
        let k: unknown = f.mapKey === 'string' ? '' : 0;
        let v: unknown;
        while (r.pos < entryEnd) {
          const t = r.uint32();
          if (t >>> 3 === 1) k = readScalar(r, f.mapKey);
          else if (t >>> 3 === 2) v = this.readOne(r, f);
          else r.skipType(t & 7);
        }
        ((o[f.key] ??= {}) as Obj)[String(k)] = v ?? (f.kind === 'message' ? {} : f.kind === 'string' ? '' : 0);
      } else if (f.repeated) {
        const arr = (o[f.key] ??= []) as unknown[];
        if ((tag & 7) === 2 && WIRE[f.kind] !== 2) { // packed numbers
          const packedEnd = r.uint32() + r.pos;
          while (r.pos < packedEnd) arr.push(this.readOne(r, f));
        } else arr.push(this.readOne(r, f));
      } else {
        const v = this.readOne(r, f);
        if (v !== undefined) o[f.key] = v; // an enum number this table does not know reads as unset
      }
    }
    if (r.pos !== end) throw new WireFormatError(`index out of range: a field runs past its message's end`);
    if (this.defaults) this.fillDefaults(o);
    return o;
  }

  /** The fields without presence that the bytes did not carry, at their defaults (WireCodecOptions.defaults). */
  private fillDefaults(o: Obj): void {
    for (const f of this.info.fields) {
      if (f.key in o) continue;
      if (f.mapKey) o[f.key] = {};
      else if (f.repeated) o[f.key] = [];
      else if (f.kind !== 'message' && !f.optional && DEFAULTS[f.kind] !== undefined) o[f.key] = DEFAULTS[f.kind];
    }
  }
}
