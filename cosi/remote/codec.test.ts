// codec: how a spec's yaml_spec is written and read. Definitions travel as JSON (one line, valid YAML), which
// a client reads with JSON.parse; any other server's YAML (block or flow style) is read by the YAML parser.
import t from 'tap';
import YAML from 'yaml';
import { newResource } from '../resource/resource.ts';
import { DEFINITION_TYPE, fillDefinition, META_NAMESPACE } from '../meta/definition.ts';
import { staticCodecs } from '../spec/spec-codec.ts';
import { META_CODECS } from './meta-codecs.ts';
import { resourceFromWire, resourceToWire, type WireResource } from './codec.ts';

const def = fillDefinition({
  type: 'Gadgets.example.org', defaultNamespace: 'gadgets', aliases: ['gd'],
  schema: { type: 'object', properties: { size: { type: 'integer', minimum: 0 }, name: { type: 'string' } } },
});
const defResource = newResource({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: 'gadgets.example.org' }, def);

t.test('a definition travels as JSON that any YAML reader takes, and comes back whole', async (t) => {
  const w = resourceToWire({ ...defResource, metadata: { ...defResource.metadata, version: 1 } }, META_CODECS);
  const text = w.spec!.yaml_spec!;
  t.equal(text.split('\n').length, 2, 'one line');
  t.same(JSON.parse(text), YAML.parse(text), 'JSON and YAML read the same object');
  t.same(YAML.parse(text).schema, def.schema, 'the extension (schema) is in it');
  const back = resourceFromWire(w, META_CODECS);
  t.same(back.spec, def);
});

/** A resource of a type without a message, as another server sends it: its yaml_spec alone. */
const freeForm = (yaml_spec: string): WireResource => ({
  metadata: { namespace: 'n', type: 'Things.example.org', id: 'a', version: '1', owner: '', phase: 'running',
    finalizers: [], labels: {}, annotations: {} },
  spec: { yaml_spec },
});
const NONE = staticCodecs([]);

t.test('another server\'s YAML is read as YAML, whatever its style', async (t) => {
  t.same(resourceFromWire(freeForm('size: 3\ntags: [x, y]\n'), NONE).spec, { size: 3, tags: ['x', 'y'] }, 'block');
  t.same(resourceFromWire(freeForm('{size: 3, tags: [x, y]}\n'), NONE).spec, { size: 3, tags: ['x', 'y'] },
    'flow style, which is no JSON');
  t.same(resourceFromWire(freeForm('{"size": 3}\n'), NONE).spec, { size: 3 }, 'JSON');
  t.throws(() => resourceFromWire(freeForm('{size: [3}\n'), NONE).spec, /yaml_spec: not valid YAML/,
    'a broken flow mapping: the YAML parser says why');
});
