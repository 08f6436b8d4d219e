// get: list or show resources in the forms kubectl users know (table, wide, yaml, json
// List, name, jsonpath, label columns, sort); --watch streams changes until interrupted.
import type { LabelQuery } from '../../cosi/state/query.ts';
import type { WatchEvent } from '../../cosi/state/state.ts';
import { flag, flagAll, has, type Parsed } from '../args.ts';
import { CliError, EXIT, exitCodeOf } from '../errors.ts';
import YAML from 'yaml';
import type { Resource } from '../../cosi/resource/resource.ts';
import type { ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import {
  nameOf, OUTPUT_FORMATS, parseOutput, renderDocuments, renderJsonPath, resourceDocument, tableHeader, tableRow,
  type Output, type TableOptions,
} from '../output/format.ts';
import { evalJsonPath, renderCell } from '../output/jsonpath.ts';
import { renderTable, StreamingTable, type TableOut } from '../output/table.ts';
import { parseSelector } from '../selector.ts';
import { unreadableNote, type Session } from '../session.ts';
import { META_NAMESPACE, NAMESPACE_TYPE } from '../../cosi/meta/definition.ts';

export const GET_HELP = `usage: cosictl get TYPE [ID...] [flags]
       cosictl get TYPE/ID [TYPE/ID...] [flags]
       cosictl get TYPE,TYPE... [flags]
       cosictl get all [flags]

Shows resources of TYPE (a type name or alias, see \`cosictl api-resources\`); of several types,
one table each (a list of all of them in yaml, json, name and jsonpath). \`all\`: every type that
has resources (those the caller may not read are counted, not shown).

flags:
  -o, --output FORMAT    table (default); wide (with OWNER, PHASE, AGE); yaml or yml (one
                         document per resource, what apply -f takes back); json (the resource, or a
                         List of several); name (TYPE/ID); jsonpath=TEMPLATE, kubectl's form:
                         -o 'jsonpath={range .items[*]}{.metadata.id}{"\\n"}{end}'
  -l, --selector SEL     label selector: k=v, k!=v, k, !k, "k in (a,b)", k<10 (numeric);
                         commas AND terms; repeat -l to OR selectors
      --field-selector S fields of the resource: spec.link=eth0,metadata.owner!=network
                         (dotted paths; commas AND terms; repeat to OR)
      --id-regexp RE     only ids matching RE
      --sort-by PATH     order by a jsonpath of each resource: {.metadata.id}, {.spec.mtu}
                         (numbers numerically; resources without it last)
      --show-labels      a LABELS column
  -L, --label-columns K  a column with each resource's label K (repeat, or K1,K2)
  -w, --watch            keep printing changes: tables mark them (+ created, - destroyed,
                         blank updated); yaml and json print {type, resource} per event
  -n, --namespace NS     namespace (default: the type's default namespace)
  -A, --all-namespaces   every namespace

An empty result prints "No resources found in NAMESPACE." on stderr and exits 0.
`;

/** The flags only get takes. */
export const GET_FLAGS = [
  'output', 'selector', 'id-regexp', 'watch', 'sort-by', 'show-labels', 'label-columns', 'all-namespaces',
  'field-selector',
];

export function outputOf(p: Parsed): Output {
  const o = flag(p, 'output') ?? 'table';
  const parsed = parseOutput(o);
  if (!parsed) throw new CliError(`--output: expected ${OUTPUT_FORMATS}, got "${o}"`, EXIT.usage);
  return parsed;
}

function tableOptions(p: Parsed, o: Output): TableOptions {
  return {
    wide: o.format === 'wide', showLabels: has(p, 'show-labels'),
    labelColumns: flagAll(p, 'label-columns').flatMap((k) => k.split(',')).map((k) => k.trim()).filter(Boolean),
  };
}

/** Orders by the value at `path` in each resource's document: numbers numerically, then text, missing last. */
export function sortByPath(rs: Resource[], path: string): Resource[] {
  // Each key once, not once per comparison: a document is built per resource for it.
  const keyed = rs.map((r) => ({ r, key: evalJsonPath(path, resourceDocument(r)) }));
  return keyed.sort(({ key: x }, { key: y }) => {
    if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;
    const nx = Number(x);
    const ny = Number(y);
    if (typeof x !== 'object' && typeof y !== 'object' && !Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    return renderCell(x).localeCompare(renderCell(y));
  }).map(({ r }) => r);
}

/** One --field-selector: terms a resource must all meet (path = or != value). */
type FieldSelector = { path: string; equal: boolean; value: string }[];

/** "spec.link=eth0,metadata.owner!=network" into terms; paths are dotted fields of the resource's document. */
export function parseFieldSelector(text: string): FieldSelector {
  return text.split(',').map((term) => {
    const m = /^\s*([A-Za-z_][\w.]*)\s*(==|!=|=)\s*(.*?)\s*$/.exec(term);
    if (!m) {
      throw new CliError(`--field-selector: "${term}" is not PATH=VALUE or PATH!=VALUE (e.g. spec.link=eth0)`,
        EXIT.usage);
    }
    return { path: m[1]!, equal: m[2] !== '!=', value: m[3]! };
  });
}

/** Whether the resource meets any of the selectors (each term of one: its field, as text, equal or not). */
export function matchesFields(r: Resource, selectors: readonly FieldSelector[]): boolean {
  const doc = resourceDocument(r);
  return selectors.some((terms) => terms.every((t) => {
    const v = evalJsonPath(`{.${t.path}}`, doc);
    return (v === undefined ? '' : renderCell(v)) === t.value ? t.equal : !t.equal;
  }));
}

/** What get is asked for: each type named, with its ids (none: every resource of it), in the order given. */
export function getTargets(positional: readonly string[]): { type: string; ids: string[] }[] {
  const [first, ...rest] = positional;
  if (first === undefined) throw new CliError('get: name a resource type (see `cosictl api-resources`)', EXIT.usage);
  if (first.includes('/')) {
    const targets: { type: string; ids: string[] }[] = [];
    for (const word of positional) {
      const at = word.indexOf('/');
      if (at <= 0 || at === word.length - 1) {
        throw new CliError(`get: "${word}": after TYPE/ID, every argument is TYPE/ID`, EXIT.usage);
      }
      const type = word.slice(0, at);
      const known = targets.find((x) => x.type === type);
      if (known) known.ids.push(word.slice(at + 1));
      else targets.push({ type, ids: [word.slice(at + 1)] });
    }
    return targets;
  }
  const types = first.split(',');
  if (types.some((x) => !x)) throw new CliError(`get: "${first}": an empty type name between commas`, EXIT.usage);
  if (types.length > 1 && rest.length) {
    throw new CliError(`get ${first}: ids name resources of one type; give TYPE/ID for each instead`, EXIT.usage);
  }
  return types.length > 1 ? types.map((type) => ({ type, ids: [] })) : [{ type: first, ids: rest }];
}

export async function get(
  s: Session, p: Parsed, out: (text: string) => void, err: (text: string) => void = () => {},
  printTable: TableOut = (header, rows) => out(renderTable(header, rows)),
): Promise<number> {
  const everything = p.positional.length === 1 && p.positional[0] === 'all';
  // Not the meta namespace's own types (definitions, namespaces): kubectl's `get all` leaves those out too.
  const targets = everything ? (await s.browsableTypes()).map((d) => ({ type: d.type, ids: [] as string[] }))
    : getTargets(p.positional);
  const output = outputOf(p);
  const defs = await Promise.all(targets.map(({ type }) => s.resolve(type)));
  const allNamespaces = has(p, 'all-namespaces');
  if (allNamespaces && has(p, 'namespace')) throw new CliError('-A and -n contradict each other: give one', EXIT.usage);
  const fields = flagAll(p, 'field-selector').map(parseFieldSelector);
  const labelQueries: LabelQuery[] = flagAll(p, 'selector').map(parseSelector);
  const idRegexp = flag(p, 'id-regexp');
  if (idRegexp !== undefined) {
    try {
      new RegExp(idRegexp);
    } catch (e) {
      throw new CliError(`--id-regexp: "${idRegexp}" is not a regular expression: ${(e as Error).message
        .replace(/^Invalid regular expression: \/.*\/\w*: /, '')}`, EXIT.usage);
    }
  }
  const sortBy = flag(p, 'sort-by');
  const table = tableOptions(p, output);
  const isTable = output.format === 'table' || output.format === 'wide';
  if (!isTable && (table.showLabels || table.labelColumns?.length)) {
    throw new CliError('--show-labels and -L add table columns: use them with -o table or -o wide', EXIT.usage);
  }

  if (has(p, 'watch')) {
    if (targets.length > 1) throw new CliError('get --watch follows one type', EXIT.usage);
    if (allNamespaces || fields.length) {
      throw new CliError('get --watch follows one namespace, by labels: not with -A or --field-selector', EXIT.usage);
    }
    const def = defs[0]!;
    const namespace = s.namespaceFor(def);
    const ids = targets[0]!.ids;
    if (ids.length > 1) throw new CliError('get --watch: at most one id', EXIT.usage);
    if (sortBy) {
      throw new CliError('get --watch: --sort-by orders a list; a watch prints events as they come', EXIT.usage);
    }
    const streaming = new StreamingTable(tableHeader(def, true, table));
    // The header waits for the resources there already, so that both share their widths.
    let pending: string[][] | undefined = ids[0] === undefined ? [] : undefined;
    if (isTable && !pending) out(streaming.rows([]));
    const mark = (e: WatchEvent) => (e.type === 'created' ? '+' : e.type === 'destroyed' ? '-' : ' ');
    const watch = await s.state.watch(
      { namespace, type: def.type, ...(ids[0] !== undefined ? { id: ids[0] } : {}) },
      ids[0] !== undefined ? {} : { bootstrapContents: true, labelQueries, ...(idRegexp ? { idQuery: idRegexp } : {}) },
      (events) => {
        const rows: string[][] = [];
        for (const e of events) {
          if (e.type === 'bootstrapped' && pending) {
            out(streaming.rows(pending));
            pending = undefined;
            continue;
          }
          if (e.type !== 'created' && e.type !== 'updated' && e.type !== 'destroyed') continue;
          if (e.resource.metadata.version === 0) continue; // a tombstone: nothing there yet
          if (isTable) rows.push(tableRow(e.resource, def, mark(e), table));
          else out(watchEventText(e, def, output));
        }
        if (!rows.length) return;
        if (pending) pending.push(...rows);
        else out(streaming.rows(rows));
      },
      true, // with bootstrapped, which says the resources there already have all come
    );
    await new Promise<void>((r) => {
      process.once('SIGINT', r);
      process.once('SIGTERM', r);
      void watch.done.then(() => r());
    });
    watch.close();
    const failed = await Promise.race([watch.done, Promise.resolve(undefined)]);
    if (failed) throw new CliError(`the watch ended: ${failed.message}`, exitCodeOf(failed));
    return EXIT.ok;
  }

  const namespaces = allNamespaces ? (await s.state.list({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE }))
    .map((r) => r.metadata.id) : undefined;
  let unreadable = 0;
  const listOf = async (def: ResourceDefinitionSpec): Promise<Resource[]> => {
    const query = { labelQueries, ...(idRegexp ? { idQuery: idRegexp } : {}) };
    // `get all` shows what the caller may read; the types it may not are counted, not an error.
    const lists = await Promise.all((namespaces ?? [s.namespaceFor(def)]).map((namespace) => (everything
      ? s.listReadable({ namespace, type: def.type }, query) : s.state.list({ namespace, type: def.type }, query))));
    if (lists.includes(undefined)) unreadable++;
    return lists.flatMap((l) => l ?? []);
  };
  const sets = await Promise.all(targets.map(async ({ ids }, i) => {
    const def = defs[i]!;
    const found = ids.length ? await Promise.all(ids.map((id) => s.getNamed(def, id))) : await listOf(def);
    const resources = fields.length ? found.filter((r) => matchesFields(r, fields)) : found;
    return { def, resources: sortBy ? sortByPath(resources, sortBy) : resources };
  }));
  const single = targets.length === 1 && targets[0]!.ids.length === 1;
  const empty = targets.length === 1 && !allNamespaces
    ? `No resources found in ${s.namespaceFor(defs[0]!)} namespace.` : 'No resources found.';
  const code = show(sets, { output, table, single, out, err, printTable }, empty);
  if (unreadable) err(unreadableNote(unreadable));
  return code;
}

interface Shown {
  output: Output; table: TableOptions; single: boolean; out: (text: string) => void; err: (text: string) => void;
  printTable: TableOut;
}

/** Prints resources, by type: a table each (a blank line between), or one list of them all; `empty` when none. */
function show(
  sets: readonly { def: ResourceDefinitionSpec; resources: Resource[] }[], o: Shown, empty: string,
): number {
  const all = sets.flatMap((x) => x.resources);
  if (!all.length) {
    o.err(`${empty}\n`);
    if (o.output.format === 'json') o.out(renderDocuments([], 'json'));
    return EXIT.ok;
  }
  switch (o.output.format) {
    case 'table': case 'wide':
      sets.filter((x) => x.resources.length).forEach(({ def, resources }, i) => {
        if (i) o.out('\n');
        o.printTable(tableHeader(def, false, o.table), resources.map((r) => tableRow(r, def, undefined, o.table)));
      });
      break;
    case 'name':
      o.out(sets.flatMap(({ def, resources }) => resources.map((r) => `${nameOf(r, def)}\n`)).join(''));
      break;
    case 'jsonpath':
      o.out(renderJsonPath(o.output.template!, all, o.single));
      break;
    default: o.out(renderDocuments(all, o.output.format, o.single));
  }
  return EXIT.ok;
}

/** One watch event in yaml, json or name form: which event, and the resource after it. */
function watchEventText(e: WatchEvent, def: Parameters<typeof nameOf>[1], o: Output): string {
  switch (o.format) {
    case 'name': return `${e.type} ${nameOf(e.resource, def)}\n`;
    case 'jsonpath': return renderJsonPath(o.template!, [e.resource], true) + '\n';
    case 'json': return JSON.stringify({ type: e.type, resource: resourceDocument(e.resource) }) + '\n';
    default: return `---\n${YAML.stringify({ type: e.type, resource: resourceDocument(e.resource) }).trimEnd()}\n`;
  }
}
