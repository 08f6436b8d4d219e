import t from 'tap';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import protobuf from 'protobufjs';
import { generate, load, WIRE_FILES } from './gen-proto.ts';
import { EVENT_NUMBER, OP_NUMBER, OPS } from '../cosi/remote/codec.ts';
import { ROOT } from './lib/paths.ts';

const files = generate();
const DOCUMENTED_ADDRESS =
  /export interface AddressSpecSpec \{\n {2}\/\*\* The address with its prefix length[^\n]*\*\/\n {2}address: string;/;

t.test('the generated files match proto/ (run `npm run gen:proto` after editing a .proto)', async (t) => {
  for (const f of files) t.equal(readFileSync(f.path, 'utf8'), f.text, relative(ROOT, f.path));
});

t.test('the wire names and numbers cosi-wire.md fixes', async (t) => {
  const d = files.find((f) => f.path.endsWith('wire-messages.ts'))!.text;
  for (const needle of [
    '"key":"proto_spec","number":1', '"key":"yaml_spec","number":2', '"key":"start_from_bookmark","number":6',
    '"key":"api_version"', '"key":"destroy_ready","number":1', '"key":"invert","number":5',
  ]) t.ok(d.includes(needle), needle);
  // The enums travel as numbers: the codec's tables of them are the .proto's.
  const wire = load(WIRE_FILES, true);
  const values = (name: string) => (wire.lookup(name) as protobuf.Enum).values;
  const events = values('cosi.resource.EventType');
  for (const [type, n] of Object.entries(EVENT_NUMBER)) t.equal(events[type.toUpperCase()], n, `EventType ${type}`);
  const ops = values('cosi.resource.LabelTerm.Operation');
  for (const [op, n] of Object.entries(OP_NUMBER)) t.equal(ops[op.toUpperCase().replace('-', '_')], n, `op ${op}`);
  t.equal(OPS[ops.NOT_EXISTS!], 'exists', 'NOT_EXISTS reads as an inverted EXISTS');
});

t.test('spec types: one interface per message, enums as short names, the layer list in order', async (t) => {
  const d = files.find((f) => f.path.endsWith('spec-types.ts'))!.text;
  t.match(d, /export type Layer = 'default' \| 'cmdline' \| 'platform' \| 'dhcp' \| 'config';/);
  t.match(d, DOCUMENTED_ADDRESS, 'documented from the .proto comment');
  t.match(
    d, /export interface LinkStatusSpec \{[\s\S]*?\n {2}mtu\?: number;[\s\S]*?\n {2}addresses\?: string\[\];/,
    'optional fields and lists are optional',
  );
  t.match(d, /AddressSpecSpec: 'appliance\.net\.v1alpha1\.AddressSpecSpec'/, 'message names');
});

t.test('every spec message, enum and field has a comment'
  + ' (they are the docs: resources.md, cosictl explain)', async (t) => {
  const { specMessages } = await import('../machinery/model/spec-codecs.ts');
  const set = specMessages();
  const missing = [
    ...[...set.messages.values()].filter((m) => m.name !== 'google.protobuf.Timestamp').flatMap((m) => [
      ...(m.comment ? [] : [m.name]), ...m.fields.filter((f) => !f.comment).map((f) => `${m.name}.${f.name}`),
    ]),
    ...[...set.enums.values()].filter((e) => !e.comment).map((e) => e.name),
  ];
  t.same(missing, []);
  t.ok(set.messages.size > 35, `${set.messages.size} messages`);
});
