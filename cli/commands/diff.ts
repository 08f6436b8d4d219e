// diff: what `apply -f` would change, field by field. The machine says which resources would be
// created or changed (a dry run: its own validation and comparison); each of those is shown as a
// diff of its labels, annotations and spec as the machine holds them against the file's,
// normalized the way the machine stores specs.
import YAML from 'yaml';
import { loadDocuments } from '../../machinery/config/documents.ts';
import { isMap } from '../../machinery/config/safe-yaml.ts';
import { resourceName } from '../../cosi/meta/definition.ts';
import { flagAll } from '../args.ts';
import type { Command } from '../command.ts';
import { EXIT } from '../errors.ts';
import { resourceDocument } from '../output/format.ts';
import { unifiedDiff } from '../output/line-diff.ts';
import type { Session } from '../session.ts';
import { configInput, sendConfig } from './apply.ts';

export const DIFF_HELP = `usage: cosictl diff -f FILE [-f FILE...] [--exit-code]

Shows what \`cosictl apply -f FILE\` would change: for each resource it would create or
change, a diff of its labels, annotations and spec as the machine holds them (---) against
FILE's (+++). Nothing is written. FILE is what apply takes (files, directories, URLs, -).

flags:
  -f, --filename FILE   the documents to compare
      --exit-code       the default now, kept for scripts that give it

exit codes: 0 no differences, 1 differences (as kubectl diff and git diff --exit-code) or
refused, 3 invalid input, as apply's.
`;

type Doc = { labels?: unknown; annotations?: unknown; spec: unknown };

/** The part of a resource apply sets, as YAML: labels and annotations only when there are any. */
const comparable = (d: Doc) => YAML.stringify({
  ...(isMap(d.labels) && Object.keys(d.labels).length ? { labels: d.labels } : {}),
  ...(isMap(d.annotations) && Object.keys(d.annotations).length ? { annotations: d.annotations } : {}),
  spec: d.spec ?? null,
});

async function run(s: Session, files: string[], out: (t: string) => void, err: (t: string) => void): Promise<number> {
  const res = await sendConfig(s, configInput(files, 'diff'), { mode: 'merge', dryRun: true, trySeconds: 0 });
  if ('refused' in res) {
    err(`${res.refused}\n`);
    return EXIT.invalid;
  }
  const input = res.sent;
  const changes = res.applied.changes ?? [];
  const differing = new Map(changes.filter((c) => c.action !== 'unchanged').map((c) => [c.resource, c.action]));
  let shown = 0;
  for (const file of input.inputs) {
    const loaded = loadDocuments(file.text, Infinity, Infinity);
    for (const [n, doc] of ('docs' in loaded ? loaded.docs : []).entries()) {
      if (!('value' in doc) || !isMap(doc.value) || !isMap(doc.value.metadata)) continue;
      const md = doc.value.metadata;
      const def = await s.resolve(String(md.type));
      const namespace = typeof md.namespace === 'string' ? md.namespace : s.namespaceFor(def);
      const name = resourceName({ namespace, type: def.type, id: String(md.id) }, def);
      const action = differing.get(name);
      if (!action) continue;
      const want: Doc = {
        labels: md.labels, annotations: md.annotations,
        spec: s.state.codecs.get(def.type)?.normalize(doc.value.spec) ?? doc.value.spec,
      };
      let before = '';
      let version = 'none';
      if (action !== 'created') {
        const cur = resourceDocument(await s.state.get({ namespace, type: def.type, id: String(md.id) }));
        before = comparable({ ...cur.metadata, spec: cur.spec });
        version = `version ${String(cur.metadata.version)}`;
      }
      out(unifiedDiff(`${name} (the machine, ${version})`, `${name} (${file.name}, document ${n + 1})`, before,
        comparable(want)));
      shown++;
    }
  }
  if (!shown) err('no differences\n');
  return shown ? EXIT.failed : EXIT.ok;
}

export const diffCommand: Command = {
  name: 'diff',
  summary: 'diff -f FILE           what apply -f FILE would change, as a diff per resource',
  help: DIFF_HELP,
  flags: ['filename', 'exit-code'],
  run: async ({ p, out, err, session }) => run(await session(), flagAll(p, 'filename'), out, err),
};
