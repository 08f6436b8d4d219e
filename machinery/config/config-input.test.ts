import t from 'tap';
import { gzipSync } from 'node:zlib';
import YAML from 'yaml';
import { decodeConfigInput, MAX_CONFIG_BYTES, scanNesting } from './config-input.ts';

t.test('ordinary YAML passes the nesting scan, whatever brackets its scalars hold', async (t) => {
  const ok = [
    'metadata: {type: Motd, id: a}\nspec:\n  text: "hello [ { world"\n',
    'spec:\n  text: it\'s [not a flow\n  other: \'a [\'\' {\'\n',
    'spec:\n  text: |\n    [[[[[[\n' + '    {'.repeat(200) + '\n  after: [1, [2, [3]]]\n',
    'list:\n- - - a\n  - b\n- {a: [1, 2], b: "]"}\n# comment [[[[\nx: y # [[[\n',
    'key: "multi\n  line [ string"\nnext: [a,\n  b]\n',
    `deep: ${'['.repeat(64)}${']'.repeat(64)}\n`,
  ];
  for (const text of ok) {
    t.equal(scanNesting(text), undefined, text.slice(0, 40));
    t.ok(YAML.parseAllDocuments(text).every((d) => !d.errors.length), 'and it is valid YAML');
  }
});

t.test('deep nesting is refused with the line, quickly', async (t) => {
  const cases: [string, RegExp][] = [
    ['['.repeat(100_000) + ']'.repeat(100_000), /line 1: .*more than 64 open/],
    ['a: 1\nb: ' + '{c: '.repeat(100_000) + '}'.repeat(100_000), /line 2: .*more than 64 open/],
    ['- '.repeat(100_000) + 'x\n', /line 1: nested deeper .*column 200001/],
    ['x:\n' + Array.from({ length: 300 }, (_, i) => `${' '.repeat(2 * i + 2)}k${i}:`).join('\n') + ' v\n', /line 258:/],
  ];
  for (const [text, want] of cases) {
    const t0 = performance.now();
    t.match(scanNesting(text), want);
    t.ok(performance.now() - t0 < 1000, `scanned ${text.length} characters in under a second`);
  }
});

t.test('bytes: size limit, gzip, UTF-8', async (t) => {
  const text = 'metadata: {type: Motd, id: a}\nspec: {text: hi}\n';
  t.same(decodeConfigInput(Buffer.from(text)), { ok: true, text, compressed: false });
  t.same(decodeConfigInput(gzipSync(text)), { ok: true, text, compressed: true });
  t.match(decodeConfigInput(Buffer.alloc(MAX_CONFIG_BYTES + 1, 0x61)),
    { ok: false, message: /1\.0 MiB, larger than the 1\.0 MiB/ });
  const bomb = gzipSync(Buffer.alloc(50 << 20, 0x61));
  const t0 = performance.now();
  t.match(decodeConfigInput(bomb), { ok: false, message: /expands beyond the 1\.0 MiB limit/ });
  t.ok(performance.now() - t0 < 1000, 'a gzip bomb is stopped at the limit');
  t.match(decodeConfigInput(gzipSync(text).subarray(0, 15)), { ok: false, message: /gzip input is damaged/ });
  t.match(decodeConfigInput(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1])), { ok: false, message: /zstd.*gzip/ });
  t.match(decodeConfigInput(Buffer.from([0x61, 0xff, 0xfe])), { ok: false, message: /not UTF-8/ });
});
