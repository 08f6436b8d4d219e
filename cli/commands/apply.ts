// apply: creates or updates the resources of multi-document YAML files. The whole
// input is validated first (syntax, types, namespaces, ids, specs against their
// schema, ownership): if anything is wrong, every problem is printed and nothing
// is written.
import { readFileSync } from 'node:fs';
import { formatProblem, parseDocuments, type DocumentProblem } from '../../init/config/documents.ts';
import { NAMESPACE_TYPE, META_NAMESPACE } from '../../init/cosi/meta/definition.ts';
import { newResource, type Resource } from '../../init/cosi/resource/resource.ts';
import { isVersionConflict } from '../../init/cosi/state/errors.ts';
import { findResource } from '../../init/cosi/state/find.ts';
import { copyResource } from '../../init/cosi/state/freeze.ts';
import { sameSpec } from '../../init/cosi/spec/spec-equal.ts';
import { flagAll, type Parsed } from '../args.ts';
import { CliError, EXIT } from '../errors.ts';
import type { Session } from '../session.ts';

export const APPLY_HELP = `usage: cosictl apply -f FILE [-f FILE...]

Creates or updates the resources in FILE (multi-document YAML; - reads stdin):

  metadata:
    type: Motd            # type name or alias
    id: hello
    namespace: config     # optional (the type's default)
    labels: {team: a}     # optional
  spec:
    text: Hello

All documents are validated before anything is written; on any problem each one
is printed with its document number and field, and the exit code is 3.
`;

function readInput(path: string): string {
  try { return path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8'); } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`, EXIT.usage);
  }
}


export async function apply(
  s: Session, p: Parsed, out: (text: string) => void, err: (text: string) => void,
): Promise<number> {
  const files = flagAll(p, 'filename');
  if (!files.length) throw new CliError('apply: give at least one -f FILE (or -f - for stdin)', EXIT.usage);
  const defs = await s.definitions();
  const namespaces = new Set(
    (await s.state.list({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE })).map((r) => r.metadata.id),
  );

  const problems: string[] = [];
  const plan: { doc: ReturnType<typeof parseDocuments>['docs'][number]; source: string; current?: Resource }[] = [];
  for (const f of files) {
    const { docs, problems: ps } = parseDocuments(readInput(f), defs, namespaces);
    problems.push(...ps.map((x: DocumentProblem) => formatProblem(x, f === '-' ? 'stdin' : f)));
    for (const doc of docs) {
      const current = await findResource(s.state, doc);
      if (current && current.metadata.owner !== '') {
        problems.push(formatProblem({
          index: doc.index,
          what: `${doc.definition.displayType} ${doc.id}`,
          message: `is managed by "${current.metadata.owner}"; declare the matching spec resource instead`,
        }, f));
      }
      plan.push({ doc, source: f, ...(current ? { current } : {}) });
    }
  }
  if (problems.length) {
    for (const line of problems) err(`${line}\n`);
    err(`nothing applied: ${problems.length} problem(s)\n`);
    return EXIT.invalid;
  }

  for (const { doc, current } of plan) {
    const name = `${doc.definition.displayType.toLowerCase()}/${doc.id}`;
    // The first attempt uses what validation read; a conflict means it changed since: read again.
    let cur = current;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) cur = await findResource(s.state, doc);
      try {
        if (!cur) {
          await s.state.create(newResource(doc, doc.spec, { labels: doc.labels, annotations: doc.annotations }));
          out(`${name} created\n`);
        } else if (
          sameSpec(cur.spec, s.state.codecs.get(doc.type)?.normalize(doc.spec) ?? doc.spec)
          && sameSpec(cur.metadata.labels, doc.labels) && sameSpec(cur.metadata.annotations, doc.annotations)
        ) {
          out(`${name} unchanged\n`);
        } else {
          const next = copyResource(cur);
          next.spec = doc.spec; next.metadata.labels = doc.labels; next.metadata.annotations = doc.annotations;
          await s.state.update(next);
          out(`${name} configured\n`);
        }
        break;
      } catch (e) {
        if (attempt < 5 && isVersionConflict(e)) continue; // changed between our read and write
        throw e;
      }
    }
  }
  return EXIT.ok;
}
