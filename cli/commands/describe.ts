// describe: one resource for a person: its metadata in words (owner, phase, age, labels,
// finalizers), its spec, and the resources it is made from or makes (the layers' specs, the
// merged spec, the status), so one command shows a setting's way from what was declared to
// what the machine did.
import YAML from 'yaml';
import type { ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import { StateError } from '../../cosi/state/errors.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { typeAndId } from '../args.ts';
import type { Command } from '../command.ts';
import { typeThenIds } from '../completion/complete.ts';
import { CliError, EXIT } from '../errors.ts';
import { age, resourceDocument } from '../output/format.ts';
import { relatedTypes } from '../related-types.ts';
import { sourcesOf } from '../../machinery/model/layers.ts';
import type { Session } from '../session.ts';

export const DESCRIBE_HELP = `usage: cosictl describe TYPE ID [-n NS]
       cosictl describe TYPE/ID
       cosictl describe TYPE          every resource of TYPE in the namespace, one after another

Shows one resource for reading: namespace, owner (the controller that writes it, if any),
phase, version, when it was created and last changed, labels, annotations, finalizers (who
holds its teardown), its spec, and the resources along its way, in the order a setting goes:
the specs declared for it at each layer (default, cmdline, platform, dhcp, config; their ids
carry the layer: dhcp/eth0), the merged spec they make (eth0), and its status; then a
timeline of when each was created and last changed, with what a status says went wrong
(the machine keeps no event history).
  cosictl describe mergedlinkspec eth0    cosictl describe linkspec dhcp/eth0
`;

const indent = (text: string, by = '  ') => text.trimEnd().split('\n').map((l) => `${by}${l}`).join('\n');

function describeOne(r: Resource, def: ResourceDefinitionSpec, now: number): string {
  const m = r.metadata;
  const doc = resourceDocument(r);
  const kv = (k: string, v: string) => `${`${k}:`.padEnd(13)}${v}`;
  const map = (o: Record<string, string>) => Object.entries(o).map(([k, v]) => (v ? `${k}=${v}` : k)).join(', ');
  return [
    kv('Kind', def.displayType), kv('Type', m.type), kv('Namespace', m.namespace), kv('ID', m.id),
    kv('Version', String(m.version)),
    kv('Owner', m.owner ? `${m.owner} (a controller writes it)` : '(declared by a user or a config)'),
    kv('Phase', m.phase),
    kv('Created', m.created ? `${new Date(m.created).toISOString()} (${age(m.created, now)} ago)` : '-'),
    kv('Updated', m.updated ? `${new Date(m.updated).toISOString()} (${age(m.updated, now)} ago)` : '-'),
    kv('Labels', map(m.labels) || '<none>'), kv('Annotations', map(m.annotations) || '<none>'),
    kv('Finalizers', m.finalizers.join(', ') || '<none>'),
    'Spec:', indent(YAML.stringify(doc.spec ?? null)),
  ].join('\n');
}

async function found(s: Session, def: ResourceDefinitionSpec, id: string): Promise<Resource | undefined> {
  try {
    return await s.state.get({ namespace: s.namespaceFor(def), type: def.type, id });
  } catch (e) {
    if (e instanceof StateError && (e.code === 'not-found' || e.code === 'permission-denied')) return undefined;
    throw e;
  }
}

/** Fields by which a status says what went wrong. */
const PROBLEM_FIELDS = ['error', 'problem'];

/**
 * What is known of the recent past: when each resource on the way was created and last changed,
 * oldest first, with what a status says went wrong and who holds a teardown. The machine keeps no
 * event history; these are the resources' own times.
 */
export function timeline(
  rs: { d: ResourceDefinitionSpec; r: Resource }[], now: number,
  o: { of: string; namespaces: boolean } = { of: 'each resource above', namespaces: false },
): string {
  const events: { at: number; line: string }[] = [];
  for (const { d, r } of rs) {
    const m = r.metadata;
    // Across namespaces (events) each resource says its namespace; one resource's way needs none.
    const name = `${d.displayType} ${o.namespaces ? `${m.namespace}/` : ''}${m.id}`;
    if (m.created) events.push({ at: m.created, line: `${name} created` });
    const spec = r.spec as Record<string, unknown> | undefined;
    const problem = PROBLEM_FIELDS.map((f) => spec?.[f]).find((v) => typeof v === 'string' && v);
    const change = [
      ...(m.phase === 'tearingDown' ? [`tearing down, held by ${m.finalizers.join(', ') || 'nobody'}`] : []),
      ...(problem ? [`says: ${String(problem)}`] : []),
    ].join('; ');
    if (m.updated && (m.updated !== m.created || change)) {
      events.push({ at: m.updated, line: `${name} changed (version ${m.version})${change ? `: ${change}` : ''}` });
    }
  }
  const rows = events.sort((a, b) => a.at - b.at)
    .map((e) => `  ${new Date(e.at).toISOString()}  ${`${age(e.at, now)} ago`.padEnd(9)}  ${e.line}`);
  return `Timeline (the last change of ${o.of}; the machine keeps no event history):\n${
    rows.join('\n') || '  (no times recorded)'}`;
}

const isMerged = (d: ResourceDefinitionSpec) => /^Merged/.test(d.displayType);
const isStatus = (d: ResourceDefinitionSpec) => /Status$/.test(d.displayType);

/**
 * The resources on `r`'s way, in the order a setting goes: the declared specs (one per layer, as the
 * merged spec's sources name them), the merged spec, then the status. A declared spec's id is its
 * own (dhcp/eth0); the merged spec it feeds is the one naming it as a source, and its id (eth0) is
 * the status's.
 */
async function along(s: Session, def: ResourceDefinitionSpec, r: Resource):
Promise<{ d: ResourceDefinitionSpec; r: Resource; layer?: string }[]> {
  const related = relatedTypes(def, await s.definitions());
  const mergedDef = isMerged(def) ? def : related.find(isMerged);
  let merged: Resource | undefined;
  if (mergedDef === def) merged = r;
  else if (mergedDef && !isStatus(def)) {
    merged = (await s.state.list({ namespace: s.namespaceFor(mergedDef), type: mergedDef.type }))
      .find((m) => sourcesOf(m.metadata.annotations).some((src) => src.id === r.metadata.id));
  } else if (mergedDef) merged = await found(s, mergedDef, r.metadata.id);
  const key = merged?.metadata.id ?? r.metadata.id;
  const sources = merged ? sourcesOf(merged.metadata.annotations) : [];
  const shown: { d: ResourceDefinitionSpec; r: Resource; layer?: string }[] = [];
  const declared = [def, ...related].filter((x) => !isMerged(x) && !isStatus(x));
  for (const d of declared) {
    for (const src of sources.length ? sources : [{ id: key, layer: undefined }]) {
      if (d.type === def.type && src.id === r.metadata.id) continue;
      const spec = await found(s, d, src.id);
      if (spec) shown.push({ d, r: spec, ...(src.layer ? { layer: src.layer } : {}) });
    }
  }
  if (merged && mergedDef !== def) shown.push({ d: mergedDef!, r: merged });
  for (const d of related.filter(isStatus)) {
    const status = await found(s, d, key);
    if (status) shown.push({ d, r: status });
  }
  return shown;
}

export const describeCommand: Command = {
  name: 'describe',
  summary: 'describe TYPE [ID]     a resource (or each of a type) for reading, with what it is made from and makes',
  help: DESCRIBE_HELP,
  flags: [],
  completeArg: typeThenIds(1),
  async run({ p, out, err, session }) {
    const [first, second, ...extra] = p.positional;
    const [typeName, id] = typeAndId(first, second);
    if (!typeName) throw new CliError('describe: give a TYPE and an ID (or a TYPE alone: all of it)', EXIT.usage);
    if (extra.length) {
      throw new CliError(`describe: one resource, or every one of a type ("${extra[0]}" is one too many)`, EXIT.usage);
    }
    const s = await session();
    const def = await s.resolve(typeName);
    const rs = id !== undefined ? [await s.getNamed(def, id)]
      : await s.state.list({ namespace: s.namespaceFor(def), type: def.type });
    if (!rs.length) err(`No resources found in ${s.namespaceFor(def)} namespace.\n`);
    const now = Date.now();
    for (const [i, r] of rs.entries()) {
      // kubectl's separator between resources described one after another.
      if (i) out('\n\n');
      out(`${describeOne(r, def, now)}\n`);
      const way = await along(s, def, r);
      for (const { d, r: other, layer } of way) {
        const m = other.metadata;
        const spec = indent(YAML.stringify(resourceDocument(other).spec ?? null));
        out(`\nRelated: ${d.displayType} ${m.id} (${layer ? `layer ${layer}, ` : ''}version ${m.version}${
          m.owner ? `, written by ${m.owner}` : ''}):\n${spec}\n`);
      }
      out(`\n${timeline([{ d: def, r }, ...way], now)}\n`);
    }
    return EXIT.ok;
  },
};
