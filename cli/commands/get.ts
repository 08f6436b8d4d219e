// get: list or show resources; --watch streams changes (+ created, - destroyed,
// blank updated) until interrupted.
import type { LabelQuery } from '../../init/cosi/state/query.ts';
import type { WatchEvent } from '../../init/cosi/state/state.ts';
import { flag, flagAll, has, type Parsed } from '../args.ts';
import { CliError, EXIT } from '../errors.ts';
import { renderDocuments, tableHeader, tableRow, type OutputFormat } from '../output/format.ts';
import { renderTable } from '../output/table.ts';
import { parseSelector } from '../selector.ts';
import type { Session } from '../session.ts';

export const GET_HELP = `usage: cosictl get TYPE [ID...] [flags]

Shows resources of TYPE (a type name or alias, see \`cosictl api-resources\`).

flags:
  -o, --output FORMAT    table (default), yaml or json
  -l, --selector SEL     label selector: k=v, k!=v, k, !k, "k in (a,b)", k<10 (numeric);
                         commas AND terms; repeat -l to OR selectors
      --id-regexp RE     only ids matching RE
  -w, --watch            keep printing changes (+ created, - destroyed, blank updated)
  -n, --namespace NS     namespace (default: the type's default namespace)
`;

export function outputFormat(p: Parsed): OutputFormat {
  const o = flag(p, 'output') ?? 'table';
  if (o !== 'table' && o !== 'yaml' && o !== 'json') throw new CliError(
    `--output: expected table, yaml or json, got "${o}"`, EXIT.usage,
  );
  return o;
}

export async function get(s: Session, p: Parsed, out: (text: string) => void): Promise<number> {
  const [typeName, ...ids] = p.positional;
  if (!typeName) throw new CliError('get: name a resource type (see `cosictl api-resources`)', EXIT.usage);
  const format = outputFormat(p);
  const def = await s.resolve(typeName);
  const namespace = s.namespaceFor(def);
  const labelQueries: LabelQuery[] = flagAll(p, 'selector').map(parseSelector);
  const idRegexp = flag(p, 'id-regexp');

  if (has(p, 'watch')) {
    if (ids.length > 1) throw new CliError('get --watch: at most one id', EXIT.usage);
    if (format === 'table') out(renderTable(tableHeader(def, true), []));
    const mark = (e: WatchEvent) => (e.type === 'created' ? '+' : e.type === 'destroyed' ? '-' : ' ');
    const watch = await s.state.watch(
      { namespace, type: def.type, ...(ids[0] !== undefined ? { id: ids[0] } : {}) },
      ids[0] !== undefined ? {} : { bootstrapContents: true, labelQueries, ...(idRegexp ? { idQuery: idRegexp } : {}) },
      (events) => {
        for (const e of events) {
          if (e.type !== 'created' && e.type !== 'updated' && e.type !== 'destroyed') continue;
          if (e.resource.metadata.version === 0) continue; // a tombstone: nothing there yet
          if (format === 'table') out(renderTable(
            ['', ...tableHeader(def, true).slice(1)], [tableRow(e.resource, def, mark(e))],
          ).split('\n')[1] + '\n');
          else out(`${format === 'yaml' ? '---\n' : ''}${renderDocuments([e.resource], format).trimEnd()}\n`);
        }
      },
      false,
    );
    await new Promise<void>((r) => {
      process.once('SIGINT', r); process.once('SIGTERM', r); void watch.done.then(() => r());
    });
    watch.close();
    const err = await Promise.race([watch.done, Promise.resolve(undefined)]);
    if (err) throw err;
    return EXIT.ok;
  }

  const resources = ids.length
    ? await Promise.all(ids.map((id) => s.state.get({ namespace, type: def.type, id })))
    : await s.state.list({ namespace, type: def.type }, { labelQueries, ...(idRegexp ? { idQuery: idRegexp } : {}) });
  if (format === 'table') out(renderTable(tableHeader(def, false), resources.map((r) => tableRow(r, def))));
  else if (resources.length) out(renderDocuments(resources, format));
  return EXIT.ok;
}
