import t from 'tap';
import { fillDefinition } from '../../cosi/meta/definition.ts';
import { formatProblem, loadDocumentsYielding, parseDocuments, splitDocuments } from './documents.ts';

const defs = [fillDefinition({
  type: 'Motds.config.appliance.dev', defaultNamespace: 'config',
  schema: {
    type: 'object', required: ['text'],
    properties: { text: { type: 'string' }, priority: { type: 'integer', minimum: 0, maximum: 100 } },
  },
})];
const ns = new Set(['config', 'runtime']);
const motdDoc = (id: string) => `metadata: {type: motd, id: ${id}}\nspec: {text: hi}\n`;

t.test('valid documents resolve aliases and default namespaces', async (t) => {
  const { docs, problems } = parseDocuments(
    'metadata: {type: motd, id: a}\nspec: {text: hi}\n---\n'
      + 'metadata: {type: Motds.config.appliance.dev, id: b, labels: {x: 1}}\nspec: {text: yo, priority: 3}\n---\n',
    defs, ns,
  );
  t.same(problems, []);
  t.same(docs.map((d) => [d.index, d.namespace, d.type, d.id]), [
    [1, 'config', 'Motds.config.appliance.dev', 'a'], [2, 'config', 'Motds.config.appliance.dev', 'b'],
  ]);
  t.same(docs[1]!.labels, { x: '1' });
});

t.test('every problem names document, field and reason', async (t) => {
  const text = [
    'metadata: {type: motd, id: ok}\nspec: {text: fine}',
    'metadata: {type: motd, id: bad}\nspec: {text: 42, priority: 101, colour: red}',
    'metadata: {type: Nope, id: x}\nspec: {}',
    'metadata: {type: motd, id: ok}\nspec: {text: dup}',
    'metadata: {type: motd, id: "has space", namespace: elsewhere}\nspec: {text: x}',
    'spec: [1, 2',
  ].join('\n---\n');
  const { docs, problems } = parseDocuments(text, defs, ns);
  const lines = problems.map((p) => formatProblem(p, 'f.yaml'));
  t.equal(docs.length, 1, 'only the valid one parses');
  t.match(lines.join('\n'), /document 2 \(Motd bad\): spec.text: must be a string, got 42/);
  t.match(lines.join('\n'), /document 2 \(Motd bad\): spec.priority: must be <= 100, got 101/);
  t.match(lines.join('\n'), /document 2 \(Motd bad\): spec.colour: unknown field/);
  t.match(lines.join('\n'), /document 3 \(Nope x\): metadata.type: unknown resource type "Nope"/);
  t.match(lines.join('\n'), /document 4 \(Motd ok\): duplicate of document 1/);
  t.match(lines.join('\n'), /document 5 .*metadata.id: required/);
  t.match(lines.join('\n'), /document 5 .*unknown namespace "elsewhere"/);
  t.match(lines.join('\n'), /document 6: not valid YAML/);
});

t.test('hostile input is refused whole, quickly, with the reason', async (t) => {
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    .concat(Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} `
      + `[*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`))
    .join('\n');
  const cases: [string, string, RegExp][] = [
    ['alias bomb', `metadata: {type: motd, id: a}\nspec:\n  text: hi\n---\n${bomb}\n`,
      /document 2: not accepted: .*alias/i],
    ['deep', `metadata: {type: motd, id: a}\nspec: ${'['.repeat(100_000)}`, /input: line 2: nested deeper/],
    ['large', `metadata: {type: motd, id: a}\nspec: {text: "${'x'.repeat(11 << 20)}"}`, /input: larger than the 1 MiB/],
  ];
  for (const [name, text, want] of cases) {
    const t0 = performance.now();
    const { docs, problems } = parseDocuments(text, defs, ns);
    t.same(docs.length, name === 'alias bomb' ? 1 : 0, `${name}: nothing else parsed`);
    t.match(problems.map((p) => formatProblem(p)).join('\n'), want, name);
    t.ok(performance.now() - t0 < 1000, `${name}: refused in under a second`);
  }
});

t.test('a larger bound lets the machine read back its own config, still scanned for nesting', async (t) => {
  const many = Array.from({ length: 20_000 }, (_, i) => `metadata: {type: motd, id: m${i}}\nspec: {text: hello}\n`)
    .join('---\n');
  t.ok(many.length > 1 << 20, `${many.length} characters`);
  t.match(parseDocuments(many, defs, ns).problems, [{ index: 0, message: /larger than the 1 MiB limit/ }]);
  const saved = parseDocuments(many, defs, ns, 64 << 20);
  t.same([saved.problems, saved.docs.length], [[], 20_000]);
  t.match(parseDocuments(`${many}---\nspec: ${'['.repeat(100)}`, defs, ns, 64 << 20).problems,
    [{ index: 0, message: /nested deeper/ }]);
});

t.test('documents are split at their markers and parsed one by one; a huge one is refused by itself', async (t) => {
  t.same(splitDocuments('a: 1\n---\nb: 2\n--- # c\nc: 3\n...\n---\n\n'), ['a: 1\n', '---\nb: 2\n', '--- # c\nc: 3\n']);
  t.same(splitDocuments('--- |\n  text\n---\nx: "--- not a marker"\n'),
    ['--- |\n  text\n', '---\nx: "--- not a marker"\n']);
  const big = `metadata: {type: motd, id: big}\nspec: {text: "${'x'.repeat(70_000)}"}\n`;
  const r = parseDocuments(`${motdDoc('ok')}---\n${big}---\n${motdDoc('also')}`, defs, ns);
  t.match(r.problems, [{ index: 2, message: /KiB, larger than the 32 KiB a document may be/ }]);
  t.same(r.docs.map((d) => d.id), ['ok', 'also'], 'the others are read (and reported as the config stands)');
});

t.test('loading yields to the event loop, so a large config does not hold it', async (t) => {
  const text = Array.from({ length: 4000 }, (_, i) =>
    `metadata: {type: motd, id: m${i}, labels: {a: b, c: d}}\nspec: {text: "hello ${i}"}\n`).join('---\n');
  // A timer can only fire while the loader has handed the loop back; loading all at once lets none fire.
  let fired = 0;
  const timer = setInterval(() => {
    fired++;
  }, 0);
  const loaded = await loadDocumentsYielding(text, 64 << 20);
  clearInterval(timer);
  t.equal('docs' in loaded && loaded.docs.length, 4000);
  t.ok(fired >= 3, `other work ran ${fired} times while it loaded`);
});

t.test('specs of another layer: read back (with an owner) they are skipped, written by hand refused', async (t) => {
  const layered = [...defs, fillDefinition({
    type: 'LinkSpecs.net.appliance.dev', defaultNamespace: 'network', aliases: ['linkspec'],
    schema: {
      type: 'object',
      properties: { mtu: { type: 'integer' }, layer: { type: 'string', enum: ['default', 'dhcp', 'config'] } },
    },
  })];
  const text = [
    'metadata: {type: linkspec, id: default/eth0, owner: network, version: 3}\n'
      + 'spec: {layer: default, mtu: 1500}',
    'metadata: {type: linkspec, id: eth0}\nspec: {layer: dhcp, mtu: 1400}',
    'metadata: {type: linkspec, id: eth1}\nspec: {layer: config, mtu: 9000}',
    'metadata: {type: linkspec, id: eth2}\nspec: {mtu: 9000}',
  ].join('\n---\n');
  const { docs, problems, skipped } = parseDocuments(text, layered, new Set([...ns, 'network']));
  t.same(docs.map((d) => d.id), ['eth1', 'eth2'], 'the config layer, said or not, is a user\'s');
  t.same(skipped.map((p) => formatProblem(p, 'stdin')), ['stdin: document 1 (LinkSpec default/eth0): the default '
    + 'layer belongs to the machine\'s built-in defaults (owner "network"): skipped; '
    + 'a config declares the config layer']);
  t.same(problems.map((p) => formatProblem(p, 'stdin')), ['stdin: document 2 (LinkSpec eth0): spec.layer: "dhcp" '
    + 'belongs to the DHCP client; a config declares the config layer only (leave layer out)']);
});
