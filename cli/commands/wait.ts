// wait: until a resource meets a condition, kubectl wait's habit: --for=jsonpath='{.spec.state}'=applied,
// --for=condition=ready (a spec field that is true, or a state or phase of that name), --for=create,
// --for=delete. It watches the resource (no polling) and ends at --timeout, saying what it last saw.
import type { Resource } from '../../cosi/resource/resource.ts';
import { isNotFound } from '../../cosi/state/errors.ts';
import { flag, typeAndId } from '../args.ts';
import type { Command } from '../command.ts';
import { typeThenIds } from '../completion/complete.ts';
import { parseDuration } from '../duration.ts';
import { CliError, EXIT } from '../errors.ts';
import { resourceDocument } from '../output/format.ts';
import { evalJsonPath, renderCell } from '../output/jsonpath.ts';

export const WAIT_HELP = `usage: cosictl wait TYPE/ID --for=CONDITION [--timeout DURATION]
       cosictl wait TYPE ID --for=CONDITION [--timeout DURATION]

Waits until the resource meets CONDITION, watching it (no polling):
  --for=jsonpath='{.spec.state}'=applied   the value at the path, as text (a path alone: it is set)
  --for=condition=ready                    spec.ready is true, or spec.state or spec.phase is "ready"
  --for=create                             it exists
  --for=delete                             it is gone (at once when it never was)

flags:
      --for CONDITION      what to wait for (above)
      --timeout DURATION   how long (default 30s); then exit 1, saying what it last saw
  -n, --namespace NS       namespace (default: the type's default namespace)

exit codes: 0 met, 1 not within the time, 2 usage, 4 unknown type, 5 unreachable.
`;

type Condition = { what: string; met(r: Resource | undefined): boolean; seen(r: Resource | undefined): string };

const DEFAULT_WAIT_S = 30;

/** --for as a test of the resource (undefined: it does not exist). */
export function parseCondition(text: string): Condition {
  const gone = (r: Resource | undefined) => (r ? `it exists (version ${r.metadata.version})` : 'it does not exist');
  if (text === 'delete') return { what: 'deleted', met: (r) => r === undefined, seen: gone };
  if (text === 'create') return { what: 'created', met: (r) => r !== undefined, seen: gone };
  const condition = /^condition=(\w+)$/.exec(text);
  if (condition) {
    const name = condition[1]!;
    const of = (r: Resource) => (r.spec ?? {}) as Record<string, unknown>;
    return {
      what: `condition ${name}`,
      met: (r) => r !== undefined && (of(r)[name] === true
        || [of(r).state, of(r).phase].some((v) => typeof v === 'string' && v.toLowerCase() === name.toLowerCase())),
      seen: (r) => (r ? `${name}: ${renderCell(of(r)[name]) || 'unset'}, state: ${renderCell(of(r).state) || 'unset'}`
        : 'it does not exist'),
    };
  }
  const jsonpath = /^jsonpath=(\{[^}]*\})(?:=(.*))?$/.exec(text);
  if (jsonpath) {
    const [, path, want] = jsonpath;
    const at = (r: Resource | undefined) => (r ? evalJsonPath(path!, resourceDocument(r)) : undefined);
    return {
      what: `${path}${want === undefined ? ' set' : `=${want}`}`,
      met: (r) => (want === undefined ? at(r) !== undefined : at(r) !== undefined && renderCell(at(r)) === want),
      seen: (r) => (r ? `${path} is ${at(r) === undefined ? 'unset' : JSON.stringify(renderCell(at(r)))}`
        : 'it does not exist'),
    };
  }
  throw new CliError(`--for: "${text}" is none of jsonpath={PATH}=VALUE, condition=NAME, create, delete`, EXIT.usage);
}

export const waitCommand: Command = {
  name: 'wait',
  summary: 'wait TYPE/ID --for=C   until a resource meets a condition (jsonpath=, condition=, create, delete)',
  help: WAIT_HELP,
  flags: ['for'],
  completeArg: typeThenIds(1),
  async run({ p, out, session }) {
    const [first, second, ...extra] = p.positional;
    const [typeName, id] = typeAndId(first, second);
    if (!typeName || !id || extra.length) throw new CliError('wait: give one TYPE/ID (or TYPE ID)', EXIT.usage);
    const forText = flag(p, 'for');
    if (!forText) {
      throw new CliError('wait: say what for: --for=jsonpath=..., condition=..., create or delete', EXIT.usage);
    }
    const condition = parseCondition(forText);
    const timeout = flag(p, 'timeout');
    const seconds = timeout === undefined ? DEFAULT_WAIT_S : parseDuration('timeout', timeout);
    const s = await session();
    const def = await s.resolve(typeName);
    const pointer = { namespace: s.namespaceFor(def), type: def.type, id };
    const name = `${def.displayType.toLowerCase()}/${id}`;
    let last: Resource | undefined;
    let met!: () => void;
    const done = new Promise<void>((r) => {
      met = r;
    });
    const watch = await s.state.watch(pointer, {}, (events) => {
      for (const e of events) {
        if (e.type !== 'created' && e.type !== 'updated' && e.type !== 'destroyed') continue;
        // A version 0 is the watch saying nothing is there yet.
        last = e.type === 'destroyed' || e.resource.metadata.version === 0 ? undefined : e.resource;
        if (condition.met(last)) met();
      }
    });
    // The watch's first event says what is there; a resource that never was sends none: read it once.
    // Only "not found" means it does not exist: a refused or failed read is the command's error, not a deletion.
    last = await s.state.get(pointer).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (condition.met(last)) met();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), seconds * 1000);
    });
    const gone = watch.done.then((e) => e ?? new Error('the watch ended'));
    try {
      const outcome = await Promise.race([done.then(() => 'met' as const), late, gone]);
      if (outcome === 'late') {
        throw new CliError(`wait ${name}: not ${condition.what} within ${seconds} s: ${condition.seen(last)}`,
          EXIT.failed);
      }
      if (outcome instanceof Error) throw new CliError(`wait ${name}: ${outcome.message}`, EXIT.unreachable);
    } finally {
      clearTimeout(timer);
      watch.close();
    }
    out(`${name} ${condition.what}\n`);
    return EXIT.ok;
  },
};
