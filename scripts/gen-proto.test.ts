import t from 'tap';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { generate } from './gen-proto.ts';
import { ROOT } from './lib/paths.ts';

const files = generate();
const DOCUMENTED_ADDRESS =
  /export interface AddressSpecSpec \{\n {2}\/\*\* The address with its prefix length[^\n]*\*\/\n {2}address: string;/;

t.test('the generated files match proto/ (run `npm run gen:proto` after editing a .proto)', async (t) => {
  for (const f of files) t.equal(readFileSync(f.path, 'utf8'), f.text, relative(ROOT, f.path));
});

t.test('the wire names and numbers cosi-wire.md fixes', async (t) => {
  const d = files.find((f) => f.path.endsWith('wire-descriptors.ts'))!.text;
  for (const needle of [
    '"proto_spec"', '"yaml_spec"', '"start_from_bookmark"', '"api_version"', '"destroy_ready"', '"LT_NUMERIC": 6',
    '"NOOP": 5', '"invert"',
  ]) t.ok(d.includes(needle), needle);
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
