// The JSON Schema made from a spec schema, judged by the field's own validator (ajv, draft 2020-12): it must take
// and refuse the same values our validator does.
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { JSON_SCHEMA_DIALECT, toJsonSchema } from './json-schema.ts';
import { validateSpec, type SpecSchema } from './schema.ts';

const SCHEMA: SpecSchema = {
  type: 'object', description: 'A sample of every kind.', required: ['name'],
  properties: {
    name: { type: 'string', pattern: '^[a-z]+$', patternHelp: 'lowercase letters', maxLength: 8 },
    mode: { type: 'string', enum: ['fast', 'slow'] },
    address: { type: 'string', format: 'ipv4' },
    every: { type: 'string', format: 'duration' },
    count: { type: 'integer', minimum: 1, maximum: 9 },
    ratio: { type: 'number', minimum: 0 },
    on: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    anything: { type: 'any' },
  },
};

t.test('the document: dialect, id, title, descriptions that carry what a pattern means', async (t) => {
  const j = toJsonSchema(SCHEMA, { id: 'https://example.test/sample.json', title: 'sample' });
  t.equal(j.$schema, JSON_SCHEMA_DIALECT);
  t.equal(j.$id, 'https://example.test/sample.json');
  const props = j.properties as Record<string, Record<string, unknown>>;
  t.equal(props.name!.description, 'Must be lowercase letters.');
  t.equal(props.address!.format, 'ipv4', 'a format JSON Schema has too');
  t.equal(props.every!.format, undefined, 'ours: a duration such as 30s is not ISO 8601\'s');
  t.match(props.every!.description, /a duration \(e\.g\. 30s, 5m, 1h30m\)/);
  t.same(props.anything, {}, 'any value');
  t.equal(j.additionalProperties, false, 'unknown fields refused, as ours refuses them');
});

t.test('ajv takes and refuses what our validator does', async (t) => {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  // ajv-formats is CommonJS: its default export arrives under .default when imported from ESM.
  const addFormats = (addFormatsModule as unknown as { default?: FormatsPlugin }).default
    ?? (addFormatsModule as unknown as FormatsPlugin);
  addFormats(ajv);
  const check = ajv.compile(toJsonSchema(SCHEMA, { id: 'https://example.test/s.json', title: 's' }));
  const values: [string, unknown][] = [
    ['the least', { name: 'a' }],
    ['every field', { name: 'abc', mode: 'slow', address: '192.0.2.1', every: '5m', count: 3, ratio: 0.5, on: true,
      tags: ['x'], env: { A: 'b' }, anything: { deep: [1] } }],
    ['no name', { mode: 'fast' }],
    ['a name against the pattern', { name: 'ABC' }],
    ['a name too long', { name: 'abcdefghij' }],
    ['not in the enum', { name: 'a', mode: 'medium' }],
    ['not an IPv4 address', { name: 'a', address: '300.1.1.1' }],
    ['a fraction where an integer goes', { name: 'a', count: 1.5 }],
    ['over the maximum', { name: 'a', count: 10 }],
    ['below the minimum', { name: 'a', ratio: -1 }],
    ['a string for a boolean', { name: 'a', on: 'yes' }],
    ['an empty list', { name: 'a', tags: [] }],
    ['too many items', { name: 'a', tags: ['1', '2', '3', '4'] }],
    ['a number in a map of strings', { name: 'a', env: { A: 1 } }],
    ['an unknown field', { name: 'a', colour: 'blue' }],
    ['not a mapping', ['a']],
  ];
  for (const [what, v] of values) {
    const ours = validateSpec(SCHEMA, v);
    t.equal(check(v), ours.length === 0, `${what}: ${ours.length ? 'both refuse' : 'both take'}`);
  }
});
