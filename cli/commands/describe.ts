// describe: one resource for a person: its metadata in words (owner, phase, age, labels,
// finalizers), its spec, and the resources of the same id it is made from or makes (a
// spec's merged spec and status, a status's spec), so one command shows a setting's way
// from what was declared to what the machine did.
import YAML from 'yaml';
import type { ResourceDefinitionSpec } from '../../init/cosi/meta/definition.ts';
import { StateError } from '../../init/cosi/state/errors.ts';
import type { Resource } from '../../init/cosi/resource/resource.ts';
import type { Command } from '../command.ts';
import { CliError, EXIT } from '../errors.ts';
import { age, resourceDocument } from '../output/format.ts';
import { relatedTypes } from '../related-types.ts';
import type { Session } from '../session.ts';

export const DESCRIBE_HELP = `usage: cosictl describe TYPE ID [-n NS]

Shows one resource for reading: namespace, owner (the controller that writes it, if any),
phase, version, when it was created and last changed, labels, annotations, finalizers (who
holds its teardown), its spec, and the resources of the same id along its way: a spec's
merged spec and status, a merged spec's layers, a status's spec.
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
  try { return await s.state.get({ namespace: s.namespaceFor(def), type: def.type, id }); } catch (e) {
    if (e instanceof StateError && (e.code === 'not-found' || e.code === 'permission-denied')) return undefined;
    throw e;
  }
}

export const describeCommand: Command = {
  name: 'describe',
  summary: 'describe TYPE ID       one resource for reading, with what it is made from and makes',
  help: DESCRIBE_HELP,
  flags: [],
  async run({ p, out, session }) {
    const [typeName, id, ...extra] = p.positional;
    if (!typeName || id === undefined) throw new CliError('describe: give a TYPE and an ID', EXIT.usage);
    if (extra.length) {
      throw new CliError(`describe: one resource at a time ("${extra[0]}" is one too many)`, EXIT.usage);
    }
    const s = await session();
    const def = await s.resolve(typeName);
    const r = await found(s, def, id);
    if (!r) throw new CliError(`no ${def.displayType} "${id}" in namespace ${s.namespaceFor(def)}`, EXIT.notFound);
    const now = Date.now();
    // In the order a setting goes: declared, merged, then what the machine did.
    const rank = (d: ResourceDefinitionSpec) =>
      (/^Merged/.test(d.displayType) ? 1 : /Status$/.test(d.displayType) ? 2 : 0);
    const related = (await Promise.all(relatedTypes(def, await s.definitions()).sort((a, b) => rank(a) - rank(b))
      .map(async (d) => ({ d, r: await found(s, d, id) })))).filter((x) => x.r);
    out(`${describeOne(r, def, now)}\n`);
    for (const { d, r: other } of related) {
      const owner = other!.metadata.owner ? `, written by ${other!.metadata.owner}` : '';
      out(`\nRelated: ${d.displayType} ${id} (version ${other!.metadata.version}${owner}):\n`
        + `${indent(YAML.stringify(resourceDocument(other!).spec ?? null))}\n`);
    }
    return EXIT.ok;
  },
};
