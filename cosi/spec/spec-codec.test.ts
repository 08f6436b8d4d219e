// The spec codecs against independent readers: protobufjs (parsing our .proto files)
// decodes what our table-driven encoder writes and the other way round, for every
// built-in message with values covering its fields; protoc's FileDescriptorSet of the
// same files reads back as the same tables; the YAML text reads back the same in the
// `yaml` library and in PyYAML (a YAML 1.1 reader).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import YAML from 'yaml';
import { specMessages } from '../../machinery/model/spec-codecs.ts';
import { ROOT } from '../../scripts/lib/paths.ts';
import { SPEC_FILES } from '../../scripts/gen-proto.ts';
import { readDescriptorSet } from './descriptor-set.ts';
import { enumValueName, type FieldInfo, type MessageInfo } from './message-info.ts';
import { messagePlan } from './proto-object.ts';
import { READS_BEFORE_COMPILING, wireCodec } from './proto-wire.ts';
import { yamlText } from './yaml-text.ts';

const set = specMessages();
const root = new protobuf.Root();
root.resolvePath = (_o, target) => (target === 'google/protobuf/descriptor.proto'
  ? `/usr/include/${target}`
  : target.startsWith('google/') ? target : join(ROOT, 'proto', target));
root.loadSync(SPEC_FILES(), { keepCase: true });
root.resolveAll();

/** A value of every field, varied by seed (the object form). */
function sample(m: MessageInfo, seed: number, depth = 0): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const one = (f: FieldInfo, i: number): unknown => {
    switch (f.kind) {
      case 'string': return `${f.key}-${seed}-${i} ü`;
      case 'bool': return (seed + i) % 2 === 0;
      case 'bytes': return Buffer.from(`${f.key}-${seed}-${i}`);
      case 'double': case 'float': return f.kind === 'float' ? 1.5 * (seed + 1) : 1234.5625 * (seed + 1) + i;
      case 'int32': case 'sint32': case 'sfixed32': return -(seed * 1000 + i + 1);
      case 'int64': case 'sint64': case 'sfixed64': return -(2 ** 40) - seed - i;
      case 'uint64': case 'fixed64': return 2 ** 41 + seed + i;
      case 'enum': {
        const vs = set.enums.get(f.type!)!.values.filter((v) => v.number !== 0);
        return enumValueName(f.type!, vs[(seed + i) % vs.length]!.name);
      }
      case 'message': return f.type === 'google.protobuf.Timestamp'
        ? new Date(1_700_000_000_123 + seed * 1000 + i).toISOString()
        : sample(set.messages.get(f.type!)!, seed + i, depth + 1);
      default: return seed * 7 + i + 1;
    }
  };
  for (const f of m.fields) {
    if (f.mapKey) o[f.key] = { a: one(f, 1), b: one(f, 2) };
    else if (f.repeated) o[f.key] = [one(f, 1), one(f, 2), one(f, 3)];
    else o[f.key] = one(f, 0);
  }
  return o;
}

t.test('our encoding and protobufjs\'s decode each other, for every built-in message', async (t) => {
  let n = 0;
  for (const m of set.messages.values()) {
    if (m.name === 'google.protobuf.Timestamp') continue;
    const plan = messagePlan(set, m.name);
    const type = root.lookupType(m.name);
    for (const seed of [0, 1, 2]) {
      const value = plan.normalize(sample(m, seed));
      const bytes = plan.encode(value);
      const theirs = type.decode(bytes);
      t.same(type.encode(theirs).finish(), bytes,
        `${m.name} #${seed}: protobufjs re-encodes our bytes to the same bytes`);
      t.same(plan.decode(type.encode(theirs).finish()), value, `${m.name} #${seed}: round trip through protobufjs`);
      n++;
    }
  }
  t.ok(n > 100, `${n} messages and values`);
});

t.test('a type\'s first reads (by the table) and its later ones (compiled) read alike, defaults too', async (t) => {
  let n = 0;
  for (const m of set.messages.values()) {
    if (m.name === 'google.protobuf.Timestamp') continue;
    const full = messagePlan(set, m.name).encode(messagePlan(set, m.name).normalize(sample(m, 1)));
    for (const defaults of [false, true]) {
      const codec = wireCodec(set, m.name, { defaults });
      const empty = new Uint8Array(0);
      const reads = Array.from({ length: READS_BEFORE_COMPILING + 2 }, (_, i) => codec.decode(i % 2 ? full : empty));
      const alike = (odd: number) => reads.filter((_, i) => i % 2 === odd);
      t.same(alike(1), Array(reads.length / 2).fill(reads[1]), `${m.name}, defaults ${defaults}: values alike`);
      t.same(alike(0), Array(reads.length / 2).fill(reads[0]), `${m.name}, defaults ${defaults}: empty ones alike`);
    }
    n++;
  }
  t.ok(n > 30, `${n} messages`);
});

t.test('defaults: an all-default message is empty on the wire and complete in the object form', async (t) => {
  const plan = messagePlan(set, 'appliance.net.v1alpha1.LinkStatusSpec');
  t.same(plan.encode(plan.normalize({})).length, 0, 'nothing on the wire');
  t.same(plan.decode(new Uint8Array(0)), { index: 0, type: '', up: false, operState: '' },
    'plain scalars present, optional ones and lists absent');
  t.same(plan.decode(plan.encode({ mtu: 0 })), { index: 0, type: '', up: false, operState: '', mtu: 0 },
    'an optional zero is kept');
});

t.test('protoc\'s FileDescriptorSet of proto/appliance reads back as the tables the program carries', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fds-'));
  execFileSync('protoc', [
    '-I', join(ROOT, 'proto'), '-I', '/usr/include', '--include_imports', `--descriptor_set_out=${join(dir, 'set.pb')}`,
    ...SPEC_FILES(),
  ]);
  const read = readDescriptorSet(readFileSync(join(dir, 'set.pb')));
  const strip = (m: MessageInfo) => ({ name: m.name, fields: m.fields.map(({ comment: _c, rules: _r, ...f }) => f) });
  for (const m of set.messages.values()) {
    if (m.name === 'google.protobuf.Timestamp') continue;
    t.same(strip(read.messages.get(m.name)!), strip(m), m.name);
  }
  for (const e of set.enums.values()) {
    t.same(read.enums.get(e.name)?.values, e.values.map(({ comment: _c, ...v }) => v), e.name);
  }
});

t.test('YAML text reads back the same in `yaml` and in PyYAML', async (t) => {
  const values: unknown[] = [
    {
      a: 'plain', b: 'with space', c: '10.0.2.15/24', d: 'y', e: 'no', f: 'null', g: '', h: '-dash', i: 'a: b',
      j: "it's", k: 'line\nbreak', l: 'tab\there',
    },
    { n: 0, m: -1.5, big: 2 ** 53 - 1, tiny: 1e-7, huge: 1e21, t: true, f: false, z: null },
    { list: [1, 'two', { three: 3, four: [4] }, [5, 6], [], {}], empty: [], obj: {} },
    { '123': 'numeric key', 'key with space': 1, 'ünï': 'cödé', '2026-01-01': 'a date-like key' },
    ['top', 'level', { list: true }],
    {
      ts: '2026-11-22T05:10:00.000Z', mac: '52:54:00:12:34:56', v6: 'fe80::1/64', sexagesimal: '1:20', octal: '0755',
      hex: '0x1f',
    },
  ];
  for (const v of values) t.same(YAML.parse(yamlText(v)), v, `yaml: ${JSON.stringify(v).slice(0, 50)}`);
  const py = execFileSync('/usr/bin/python3', [
    '-c',
    'import sys, json, yaml\nfor doc in sys.stdin.read().split("\\n#---\\n"): print(json.dumps(yaml.safe_load(doc)))',
  ], { input: values.map(yamlText).join('\n#---\n'), encoding: 'utf8' });
  py.trim().split('\n').forEach((line, i) =>
    t.same(JSON.parse(line), values[i], `PyYAML: ${JSON.stringify(values[i]).slice(0, 50)}`));
});
