// events: the timeline describe prints for one resource's way, across the machine: when each resource
// was created and last changed, with what a status says went wrong and who holds a teardown. The machine
// keeps no event history: these are the resources' own times (kubectl events' habit, on what we have).
import type { ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { flag, has } from '../args.ts';
import type { Command } from '../command.ts';
import { typeThenIds } from '../completion/complete.ts';
import { CliError, EXIT } from '../errors.ts';
import { timeline } from './describe.ts';
import { sinceOf } from './logs.ts';
import { unreadableNote } from '../session.ts';

export const EVENTS_HELP = `usage: cosictl events [TYPE] [--since WHEN] [-n NS]

The machine's recent past, oldest first: when each resource was created and last changed,
what a status says went wrong, who holds a teardown (the timeline \`describe\` prints for one
resource's way, across them all). Without TYPE, every type (but the meta namespace's), each
in its default namespace; with -n, that namespace. The machine keeps no event history: an
older change of a resource changed again since is not shown.

flags:
      --since WHEN   only what happened in the last DURATION (30s, 5m, 2h) or since a time
  -n, --namespace NS namespace (default: each type's default namespace)
`;

export const eventsCommand: Command = {
  name: 'events',
  summary: 'events [TYPE]          when resources were created and last changed, and what went wrong',
  help: EVENTS_HELP,
  flags: ['since'],
  completeArg: typeThenIds(0),
  async run({ p, out, err, session }) {
    const [typeName, ...extra] = p.positional;
    if (extra.length) throw new CliError(`events: one TYPE at most ("${extra[0]}" is one too many)`, EXIT.usage);
    const since = flag(p, 'since');
    const from = since === undefined ? 0 : sinceOf(since);
    const s = await session();
    const defs = typeName ? [await s.resolve(typeName)] : await s.browsableTypes();
    let unreadable = 0;
    const lists = await Promise.all(defs.map(async (d) => {
      const kind = { namespace: s.namespaceFor(d), type: d.type };
      // A type named is read or fails; of every type, those this client's role may not read are counted.
      const rs = typeName ? await s.state.list(kind) : await s.listReadable(kind);
      if (!rs) unreadable++;
      return (rs ?? []).map((r) => ({ d, r }));
    }));
    const recent = (x: { r: Resource }) => Math.max(x.r.metadata.created ?? 0, x.r.metadata.updated ?? 0) >= from;
    const rs: { d: ResourceDefinitionSpec; r: Resource }[] = lists.flat().filter(recent);
    const of = has(p, 'namespace') ? `each resource in ${flag(p, 'namespace')}` : 'each resource';
    out(`${timeline(rs, Date.now(), { of, namespaces: true })}\n`);
    if (unreadable) err(unreadableNote(unreadable));
    return EXIT.ok;
  },
};
