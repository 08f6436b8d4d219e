// wire-io against protobufjs (a build-time tool, here the reference): the same bytes for every kind of value at
// its edges, each reading back what the other wrote, and bytes that are no message refused with why.
import t from 'tap';
import protobuf from 'protobufjs';
import Long from 'long';
import { WireReader, WireWriter } from './wire-io.ts';

protobuf.util.Long = Long as unknown as typeof protobuf.util.Long;
protobuf.configure();

type Kind = 'uint32' | 'int32' | 'sint32' | 'int64' | 'uint64' | 'sint64' | 'fixed32' | 'sfixed32' | 'fixed64'
  | 'sfixed64' | 'double' | 'float' | 'bool' | 'string' | 'bytes';

const I53 = Number.MAX_SAFE_INTEGER;
const VALUES: Record<Kind, unknown[]> = {
  uint32: [0, 1, 127, 128, 300, 16383, 16384, 2 ** 31, 2 ** 32 - 1],
  int32: [0, 1, -1, 127, -128, 2 ** 31 - 1, -(2 ** 31)],
  sint32: [0, 1, -1, 63, -64, 2 ** 31 - 1, -(2 ** 31)],
  int64: [0, 1, -1, 2 ** 32, -(2 ** 32), 2 ** 35 + 7, -(2 ** 35) - 7, 1_700_000_000_123, I53, -I53],
  uint64: [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 49 + 3, I53],
  sint64: [0, 1, -1, 2 ** 33, -(2 ** 33) - 1, 2 ** 51, -(2 ** 51)],
  fixed32: [0, 1, 2 ** 32 - 1],
  sfixed32: [0, -1, 2 ** 31 - 1, -(2 ** 31)],
  fixed64: [0, 1, 2 ** 40 + 5, I53],
  sfixed64: [0, -1, -(2 ** 40) - 5, I53, -I53],
  double: [0, -0.5, 1e300, Math.PI],
  float: [0, 1.5, -2.25],
  bool: [false, true],
  string: ['', 'a', 'héllo wörld ✓', 'x'.repeat(200)],
  bytes: [new Uint8Array(0), new Uint8Array([0, 1, 255]), new Uint8Array(300).fill(7)],
};

const asNumber = (v: unknown) => (Long.isLong(v) ? (v as Long).toNumber() : v);

t.test('every kind at its edges: the bytes protobufjs writes, and back both ways', async (t) => {
  for (const [kind, values] of Object.entries(VALUES) as [Kind, unknown[]][]) {
    for (const v of values) {
      const ours = (new WireWriter(1) as unknown as Record<Kind, (x: unknown) => WireWriter>)[kind](v).finish();
      const theirs = (protobuf.Writer.create() as unknown as Record<Kind, (x: unknown) => protobuf.Writer>)[kind](
        kind.endsWith('64') && !['double'].includes(kind) ? Long.fromNumber(v as number, kind.startsWith('u')
          || kind === 'fixed64') : v,
      ).finish();
      t.same([...ours], [...theirs], `${kind} ${String(v).slice(0, 20)}: the same bytes`);
      const back = (new WireReader(theirs) as unknown as Record<Kind, () => unknown>)[kind]();
      t.same(back instanceof Uint8Array ? [...back] : back, v instanceof Uint8Array ? [...v] : v,
        `${kind} ${String(v).slice(0, 20)}: read back`);
      const theirsBack = asNumber((protobuf.Reader.create(ours) as unknown as Record<Kind, () => unknown>)[kind]());
      t.same(theirsBack instanceof Uint8Array ? [...theirsBack] : theirsBack,
        v instanceof Uint8Array ? [...v] : v, `${kind}: protobufjs reads ours`);
    }
  }
});

t.test('nested messages: fork and ldelim prefix each its length, however long', async (t) => {
  for (const size of [0, 5, 127, 128, 300, 20_000, 3_000_000]) {
    const inner = 'y'.repeat(size);
    const ours = new WireWriter(1).tag(1, 2).fork().tag(2, 2).fork().string(inner).ldelim().uint32(9).ldelim()
      .finish();
    const theirs = protobuf.Writer.create().uint32(0x0a).fork().uint32(0x12).fork().string(inner).ldelim().uint32(9)
      .ldelim().finish();
    t.ok(Buffer.compare(ours, theirs) === 0, `content of ${size} bytes`);
  }
  t.throws(() => new WireWriter().ldelim(), /ldelim without fork/);
  t.throws(() => new WireWriter().fork().finish(), /finish inside a fork/);
});

t.test('skipping unknown fields of every wire type', async (t) => {
  const bytes = protobuf.Writer.create().uint32(0x08).int64(Long.fromNumber(-5)).uint32(0x11).fixed64(7)
    .uint32(0x1a).string('skip me').uint32(0x25).fixed32(3).uint32(0x28).uint32(42).finish();
  const r = new WireReader(bytes);
  for (let i = 0; i < 4; i++) r.skipType(r.uint32() & 7);
  t.equal(r.uint32(), 0x28);
  t.equal(r.uint32(), 42);
  t.equal(r.pos, r.end);
});

t.test('bytes that are no message: cut short, a varint without end, an unknown wire type', async (t) => {
  t.throws(() => new WireReader(Buffer.from([0x80, 0x80])).uint32(), { name: 'WireFormatError' });
  t.throws(() => new WireReader(Buffer.from([0x05, 0x61])).string(), /index out of range: 1 \+ 5 > 2/);
  t.throws(() => new WireReader(Buffer.alloc(11, 0xff)).uint64(), /invalid varint encoding/);
  t.throws(() => new WireReader(Buffer.from([0x01])).skipType(7), /invalid wire type 7/);
  t.throws(() => new WireReader(Buffer.from([1, 2, 3])).fixed32(), /index out of range/);
  // A view into a larger buffer reads only its own bytes.
  const big = Buffer.from([0x96, 0x01, 0x03, 0x61, 0x62, 0x63]);
  const view = new WireReader(new Uint8Array(big.buffer, big.byteOffset + 2, 4));
  t.equal(view.string(), 'abc');
});
