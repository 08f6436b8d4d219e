import t from 'tap';
import { readFileSync } from 'node:fs';
import { GENERATED, generate } from './gen-proto.ts';

t.test('the generated descriptors match proto/ (run `npm run gen:proto` after editing a .proto)', async (t) => {
  t.equal(readFileSync(GENERATED, 'utf8'), generate());
});

t.test('the wire names and numbers cosi-wire.md fixes', async (t) => {
  const d = generate();
  for (const needle of ['"proto_spec"', '"yaml_spec"', '"start_from_bookmark"', '"api_version"', '"destroy_ready"', '"LT_NUMERIC": 6', '"NOOP": 5', '"invert"']) t.ok(d.includes(needle), needle);
});
