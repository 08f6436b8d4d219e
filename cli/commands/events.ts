// events: the timeline describe prints for one resource's way, across the machine: when each resource
// was created and last changed, with what a status says went wrong and who holds a teardown. The machine
// keeps no event history: these are the resources' own times (kubectl events' habit, on what we have).
import { META_NAMESPACE, type ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { flag, has } from '../args.ts';
import type { Command } from '../command.ts';
import { typeThenIds } from '../completion/complete.ts';
import { CliError, EXIT } from '../errors.ts';
import { timeline } from './describe.ts';
import { sinceOf } from './logs.ts';

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
    const defs = typeName ? [await s.resolve(typeName)]
      : (await s.definitions()).filter((d) => d.defaultNamespace !== META_NAMESPACE);
    let unreadable = 0;
    const lists = await Promise.all(defs.map(async (d) => {
      try {
        return (await s.state.list({ namespace: s.namespaceFor(d), type: d.type })).map((r) => ({ d, r }));
      } catch (e) {
        // Types this client's role may not read are counted, not an error: the rest is still the machine's past.
        if (!typeName && e instanceof StateError && e.code === 'permission-denied') {
          unreadable++;
          return [];
        }
        throw e;
      }
    }));
    const recent = (x: { r: Resource }) => Math.max(x.r.metadata.created ?? 0, x.r.metadata.updated ?? 0) >= from;
    const rs: { d: ResourceDefinitionSpec; r: Resource }[] = lists.flat().filter(recent);
    out(`${timeline(rs, Date.now(), has(p, 'namespace') ? `each resource in ${flag(p, 'namespace')}`
      : 'each resource')}\n`);
    if (unreadable) err(`(${unreadable} type(s) not shown: this client's role may not read them)\n`);
    return EXIT.ok;
  },
};
