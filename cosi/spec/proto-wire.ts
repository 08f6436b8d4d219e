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

/** How write() treats a field. */
const enum Shape { String, Scalar, Present, Map, Packed, Repeated }

/**
 * A message type's first reads go by the table, then its loop is compiled: `new Function` compiles at run time, out
 * of the executable's code cache, and at boot most types are read a few times each (PID 1 spent ~12 ms compiling
 * readers between API ready and the network milestone, the network plugin ~6).
 */
export const READS_BEFORE_COMPILING = 16;
const LIST = Symbol('a list');
const MAP = Symbol('a map');
const EMPTY_LIST: readonly unknown[] = Object.freeze([]);
const EMPTY_MAP: Readonly<Obj> = Object.freeze({});

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
  /** google.protobuf.Timestamp as RFC 3339 text (the object form, default) or as milliseconds since the epoch. */
  timestamps?: 'rfc3339' | 'millis';
}

export function wireCodec(set: MessageSet, messageName: string, options: WireCodecOptions = {}): WireCodec {
  const cache = new Map<string, MessagePlan>();
  const planOf = (n: string): MessagePlan => {
    let p = cache.get(n);
    if (!p) {
      const info = set.messages.get(n);
      if (!info) throw new Error(`message ${n} is not in the set`);
      p = new MessagePlan(info, set, planOf, options.defaults ?? false, options.timestamps === 'millis');
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
  /** Fields by number: an array, since field numbers are small (a number past its end is unknown). */
  private readonly byNumber: (FieldInfo | undefined)[] = [];
  /** With defaults: each field without presence and its default (LIST and MAP: the shared frozen empty ones). */
  private readonly blanks: [key: string, value: unknown][] = [];
  private readonly enums = new Map<string, EnumMaps>();
  private reader: ((r: WireReader, length: number) => Obj) | undefined;
  /** Messages read by the table so far (READS_BEFORE_COMPILING). */
  private tableReads = 0;
  /** Per field, in order: how write() treats it, and its tag. */
  private readonly shapes: Shape[] = [];
  private readonly tags: number[] = [];
  /** A map field's value as a field of its entry message (number 2). */
  private readonly entryValues: (FieldInfo | undefined)[] = [];

  constructor(
    private readonly info: MessageInfo, private readonly set: MessageSet,
    private readonly planOf: (n: string) => MessagePlan, private readonly defaults: boolean,
    private readonly millis: boolean,
  ) {
    for (const f of info.fields) {
      // A key that would set the object's prototype, not a field (a user's descriptor could name one so).
      if (f.key === '__proto__') throw new Error(`${info.name}.${f.name}: a field may not be called __proto__`);
      const packed = f.repeated && WIRE[f.kind] !== 2;
      this.shapes.push(f.mapKey ? Shape.Map : packed ? Shape.Packed : f.repeated ? Shape.Repeated
        : f.kind === 'message' || f.optional ? Shape.Present : f.kind === 'string' ? Shape.String : Shape.Scalar);
      this.tags.push(((f.number << 3) | (f.mapKey || packed ? 2 : WIRE[f.kind])) >>> 0);
      this.entryValues.push(f.mapKey ? { ...f, number: 2, mapKey: undefined } : undefined);
      if (f.number < 1 << 16) this.byNumber[f.number] = f;
      if (f.mapKey) this.blanks.push([f.key, MAP]);
      else if (f.repeated) this.blanks.push([f.key, LIST]);
      else if (f.kind !== 'message' && !f.optional && DEFAULTS[f.kind] !== undefined) {
        this.blanks.push([f.key, DEFAULTS[f.kind]]);
      }
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
      const ms = this.millis ? v as number : Date.parse(v as string);
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
    const fields = this.info.fields;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const v = o[f.key];
      if (v === undefined || v === null) continue;
      switch (this.shapes[i]) {
        case Shape.String:
          if (v !== '') w.uint32(this.tags[i]!).string(v as string);
          break;
        case Shape.Scalar: {
          const x = this.value(f, v);
          if (!isDefault(x)) writeScalar(w.uint32(this.tags[i]!), f.kind as ScalarKind | 'enum', x);
          break;
        }
        case Shape.Present:
          this.writeOne(w, f, v);
          break;
        case Shape.Map: {
          const entry = this.entryValues[i]!;
          for (const k in v as Obj) {
            w.uint32(this.tags[i]!).fork();
            w.uint32((1 << 3) | WIRE[f.mapKey!]);
            writeScalar(w, f.mapKey!, f.mapKey === 'string' ? k : Number(k));
            this.writeOne(w, entry, (v as Obj)[k]);
            w.ldelim();
          }
          break;
        }
        case Shape.Packed: {
          const arr = v as unknown[];
          if (!arr.length) break;
          w.uint32(this.tags[i]!).fork();
          for (const x of arr) writeScalar(w, f.kind as ScalarKind | 'enum', this.value(f, x));
          w.ldelim();
          break;
        }
        case Shape.Repeated:
          for (const x of v as unknown[]) this.writeOne(w, f, x);
          break;
      }
    }
  }

  /** A Timestamp's two fields read in place: no message object is made for it. */
  readTimestamp(r: WireReader): number | string {
    const end = r.uint32() + r.pos;
    let seconds = 0;
    let nanos = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag === 0x08) seconds = r.int64();
      else if (tag === 0x10) nanos = r.int32();
      else r.skipType(tag & 7);
    }
    if (r.pos !== end) throw new WireFormatError('index out of range: a field runs past its message\'s end');
    const ms = seconds * 1000 + Math.floor(nanos / 1e6);
    return this.millis ? ms : new Date(ms).toISOString();
  }

  private readOne(r: WireReader, f: FieldInfo): unknown {
    if (f.kind === 'message') {
      if (f.type === TIMESTAMP) return this.readTimestamp(r);
      return this.nestedRead(f.type!, r);
    }
    if (f.kind === 'string') return r.string();
    const v = readScalar(r, f.kind);
    if (f.kind !== 'enum') return v;
    return this.enums.get(f.type!)!.toName.get(v as number);
  }

  /** Reads `length` bytes into the raw object form (fields by key; absent ones absent). */
  read(r: WireReader, length: number): Obj {
    if (this.reader) return this.reader(r, length);
    if (++this.tableReads <= READS_BEFORE_COMPILING) return this.readByTable(r, length);
    this.reader = this.compileReader();
    return this.reader(r, length);
  }

  /** What the compiled loop does, by the table: the object starts as its literal would, every field to `readField`. */
  private readByTable(r: WireReader, length: number): Obj {
    const end = r.pos + length;
    const o: Obj = {};
    if (this.defaults) {
      for (const [k, v] of this.blanks) {
        o[k] = v === LIST ? EMPTY_LIST : v === MAP ? EMPTY_MAP : typeof v === 'string' ? ''
          : v instanceof Uint8Array ? DEFAULTS.bytes : v;
      }
    }
    while (r.pos < end) this.readField(r, o, r.uint32());
    if (r.pos !== end) throw new WireFormatError('index out of range: a field runs past its message\'s end');
    return o;
  }

  /**
   * The read loop for this message, made once as code (what protobufjs does too): the object starts as one literal
   * (one shape; with defaults, every field without presence at its default) and each common field's tag has its
   * own case that stores under a fixed name; V8 runs that several times faster than a loop over the table. Any
   * other field, a tag with an unexpected wire type, or an unknown field goes to `readField`.
   */
  private compileReader(): (r: WireReader, length: number) => Obj {
    const key = (f: FieldInfo) => JSON.stringify(f.key);
    const init = this.defaults ? this.blanks.map(([k, v]) => `${JSON.stringify(k)}: ${
      v === LIST ? 'EMPTY_LIST' : v === MAP ? 'EMPTY_MAP' : typeof v === 'string' ? '""'
        : v instanceof Uint8Array ? 'EMPTY_BYTES' : String(v)}`) : [];
    const cases: string[] = [];
    for (const f of this.info.fields) {
      if (f.mapKey || f.repeated || f.number >= 1 << 16) continue;
      const tag = (n: number) => ((f.number << 3) | n) >>> 0;
      const read = f.kind === 'string' ? 'r.string()' : f.kind === 'bytes' ? 'r.bytes()' : f.kind === 'bool'
        ? 'r.bool()' : f.kind === 'int32' ? 'r.int32()' : f.kind === 'uint32' ? 'r.uint32()'
          : f.kind === 'message' && f.type === TIMESTAMP ? 'plan.readTimestamp(r)'
            : f.kind === 'message' ? `plan.nestedRead(${JSON.stringify(f.type)}, r)` : undefined;
      if (!read) continue;
      cases.push(`case ${tag(f.kind === 'message' || f.kind === 'string' || f.kind === 'bytes' ? 2 : 0)}: `
        + `o[${key(f)}] = ${read}; break;`);
    }
    const body = `return function read(r, length) {
  const end = r.pos + length;
  const o = { ${init.join(', ')} };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag) {
      ${cases.join('\n      ')}
      default: plan.readField(r, o, tag);
    }
  }
  if (r.pos !== end) throw new WireFormatError("index out of range: a field runs past its message's end");
  return o;
};`;
    // Code made from our own tables (field keys quoted by JSON.stringify), never from input.
    return new Function('plan', 'EMPTY_LIST', 'EMPTY_MAP', 'EMPTY_BYTES', 'WireFormatError', body)(
      this, EMPTY_LIST, EMPTY_MAP, DEFAULTS.bytes, WireFormatError,
    ) as (r: WireReader, length: number) => Obj;
  }

  /** A message field's value, read by its type's plan (wireCodec's planOf keeps each plan). */
  nestedRead(type: string, r: WireReader): Obj {
    return this.planOf(type).read(r, r.uint32());
  }

  /** One field of any kind into `o`, after its tag: what the compiled reader leaves to the table. */
  readField(r: WireReader, o: Obj, tag: number): void {
    const f = this.byNumber[tag >>> 3] ?? this.large(tag >>> 3);
    if (!f) {
      r.skipType(tag & 7);
      return;
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
      let map = o[f.key] as Obj | undefined;
      if (map === undefined || map === EMPTY_MAP) map = o[f.key] = {};
      map[String(k)] = v ?? (f.kind === 'message' ? {} : f.kind === 'string' ? '' : 0);
    } else if (f.repeated) {
      let arr = o[f.key] as unknown[] | undefined;
      if (arr === undefined || arr === EMPTY_LIST) arr = o[f.key] = [];
      if ((tag & 7) === 2 && WIRE[f.kind] !== 2) { // packed numbers
        const packedEnd = r.uint32() + r.pos;
        while (r.pos < packedEnd) arr.push(this.readOne(r, f));
      } else arr.push(this.readOne(r, f));
    } else {
      const v = this.readOne(r, f);
      if (v !== undefined) o[f.key] = v; // an enum number this table does not know reads as unset
    }
  }

  /** A field numbered past the array (rare: numbers up to 2^29 are allowed). */
  private large(n: number): FieldInfo | undefined {
    return n >= 1 << 16 ? this.info.fields.find((f) => f.number === n) : undefined;
  }



}
