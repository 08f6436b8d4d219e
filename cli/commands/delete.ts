// delete: tears down and destroys resources (waits for their finalizers), named on the
// command line or by the documents of -f files. Each is reported on its own: one that is
// missing or refused does not stop the others, and the exit code says the worst.
import type { ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { GrpcCallError } from '../../cosi/remote/grpc/client.ts';
import { Status } from '../../cosi/remote/grpc/framing.ts';
import { loadDocuments } from '../../machinery/config/documents.ts';
import { isMap } from '../../machinery/config/safe-yaml.ts';
import { flagAll, has, type Parsed } from '../args.ts';
import { CliError, EXIT, exitCodeOf } from '../errors.ts';
import { readTexts } from '../read-input.ts';
import { controllerOwnedWhy } from '../related-types.ts';
import type { Session } from '../session.ts';
import { PURGE_VOLUMES_ANNOTATION } from '../../machinery/model/extension-manifest.ts';
import { EXTENSION_TYPE } from '../../proto/gen/resource-types.ts';

export const DELETE_HELP = `usage: cosictl delete TYPE ID [ID...] [--ignore-not-found]
       cosictl delete extensionspec NAME [NAME...] --purge-volumes
       cosictl delete TYPE --all
       cosictl delete -f FILE [-f FILE...] [--ignore-not-found]

Tears down and destroys the resources, waiting until their finalizers are released (60 s at
most, or --timeout: one still held then is named, with the controllers holding it). With
-f, the resources the documents of FILE name (a file, a directory, a URL or - for stdin;
what apply -f takes). Every resource is tried: one that is missing or refused is reported
and the others still go. Resources a controller writes cannot be deleted: delete the spec
they come from.

flags:
  -f, --filename FILE     the resources FILE's documents name (metadata.type, id, namespace)
      --all               every resource of TYPE in the namespace that users declare (those a
                          controller writes are counted and left: they go with their specs)
      --ignore-not-found  a resource that does not exist is not an error
      --purge-volumes     (extension specs) remove the extensions' volumes too, for good: without it they
                          are kept on the machine's disk for the extension's next declaration
  -n, --namespace NS      namespace (default: the type's default namespace)

exit codes: 0 all deleted, 4 one was not found, 1 one was refused or failed.
`;

/** The flags only delete takes. */
export const DELETE_FLAGS = ['filename', 'ignore-not-found', 'all', 'purge-volumes'];

/** Deletions in flight at once: a burst of 500 takes a fraction of a second, not one round trip each in turn. */
const PARALLEL = 16;

interface Target { typeName: string; id: string; namespace?: string; from?: string }

/**
 * The finalizers that kept a resource past the teardown's deadline, when that is why it failed: the machine
 * answered, its controllers have not let go yet. Undefined for any other failure.
 */
async function stillHeld(s: Session, ptr: { namespace: string; type: string; id: string }, e: unknown) {
  const cause = e instanceof StateError ? e.cause : undefined;
  if (!(cause instanceof GrpcCallError) || cause.code !== Status.DEADLINE_EXCEEDED) return undefined;
  // A get that fails as well: the teardown's own error says it better.
  const now = await s.state.get(ptr).catch(() => undefined);
  return now && now.metadata.finalizers.length ? now.metadata.finalizers : undefined;
}

async function targetsOfFiles(files: string[]): Promise<Target[]> {
  const targets: Target[] = [];
  for (const input of await readTexts(files, 'delete', 'nothing deleted')) {
    const loaded = loadDocuments(input.text, Infinity, Infinity);
    if ('problem' in loaded) throw new CliError(`${input.name}: ${loaded.problem.message}`, EXIT.invalid);
    for (const doc of loaded.docs) {
      const where = `${input.name}: document ${doc.index}`;
      if ('why' in doc) throw new CliError(`${where}: ${doc.why}`, EXIT.invalid);
      const m = isMap(doc.value) && isMap(doc.value.metadata) ? doc.value.metadata : undefined;
      const { type, id, namespace } = (m ?? {}) as Record<string, unknown>;
      if (typeof type !== 'string' || typeof id !== 'string') {
        throw new CliError(`${where}: metadata.type and metadata.id name the resource to delete`, EXIT.invalid);
      }
      targets.push({ typeName: type, id, ...(typeof namespace === 'string' ? { namespace } : {}), from: where });
    }
  }
  return targets;
}

export async function del(
  s: Session, p: Parsed, out: (text: string) => void, err: (text: string) => void,
): Promise<number> {
  const files = flagAll(p, 'filename');
  const ignoreMissing = has(p, 'ignore-not-found');
  const purge = has(p, 'purge-volumes');
  let targets: Target[];
  if (files.length) {
    if (p.positional.length) throw new CliError('delete: give TYPE ID... or -f FILE, not both', EXIT.usage);
    targets = await targetsOfFiles(files);
  } else if (has(p, 'all')) {
    const [typeName, ...ids] = p.positional;
    if (!typeName || ids.length) throw new CliError('delete TYPE --all: give the TYPE alone, no ids', EXIT.usage);
    const def = await s.resolve(typeName);
    const namespace = s.namespaceFor(def);
    const found = await s.state.list({ namespace, type: def.type });
    const declared = found.filter((r) => !r.metadata.owner);
    if (found.length > declared.length) {
      err(`delete ${def.displayType.toLowerCase()} --all: ${found.length - declared.length} written by controllers `
        + 'left (they go with the specs they come from)\n');
    }
    if (!declared.length) err(`No ${def.displayType} declared by users in ${namespace} namespace.\n`);
    targets = declared.map((r) => ({ typeName: def.type, id: r.metadata.id, namespace }));
  } else {
    const [typeName, ...ids] = p.positional;
    if (!typeName || !ids.length) {
      throw new CliError('delete: give a TYPE and at least one ID (or --all), or -f FILE', EXIT.usage);
    }
    targets = ids.map((id) => ({ typeName, id }));
  }
  const defs = await s.definitions();
  // Each outcome in input order, as it would be had they gone one by one.
  const outcomes: { line: string; code: number; toErr: boolean }[] = new Array(targets.length);
  const one = async (t: Target, i: number) => {
    let def: ResourceDefinitionSpec;
    try {
      def = await s.resolve(t.typeName);
    } catch (e) {
      outcomes[i] = { line: `${t.from ? `${t.from}: ` : ''}${(e as Error).message}`, code: exitCodeOf(e), toErr: true };
      return;
    }
    const namespace = t.namespace ?? s.namespaceFor(def);
    const ptr = { namespace, type: def.type, id: t.id };
    const name = `${def.displayType.toLowerCase()}/${t.id}`;
    if (purge && def.type !== EXTENSION_TYPE) {
      outcomes[i] = { line: `delete ${name}: --purge-volumes: only extension specs have volumes; nothing deleted`,
        code: EXIT.usage, toErr: true };
      return;
    }
    try {
      const cur = await s.state.get(ptr);
      if (cur.metadata.owner) {
        outcomes[i] = {
          line: controllerOwnedWhy('delete', name, cur.metadata.owner, def, defs), code: EXIT.failed, toErr: true,
        };
        return;
      }
      // Said on the resource itself: its controller reads it as it undoes the extension.
      if (purge && cur.metadata.annotations[PURGE_VOLUMES_ANNOTATION] !== 'true') {
        await s.state.update({ ...cur, metadata: { ...cur.metadata,
          annotations: { ...cur.metadata.annotations, [PURGE_VOLUMES_ANNOTATION]: 'true' } } });
      }
      await s.state.teardownAndDestroy(ptr, { deadlineMs: s.longCallMs });
      outcomes[i] = { line: `${name} deleted${purge ? ', its volumes purged' : ''}`, code: EXIT.ok, toErr: false };
    } catch (e) {
      const held = await stillHeld(s, ptr, e);
      if (held) {
        outcomes[i] = {
          line: `delete ${name}: not released within ${s.longCallMs / 1000} s: tearing down, finalizers still `
            + `held by ${held.join(', ')} (their controllers are slow or stopped; \`cosictl get plugins\` says which `
            + 'run). It goes once they let go', code: EXIT.failed, toErr: true,
        };
        return;
      }
      if (e instanceof StateError && e.code === 'not-found') {
        outcomes[i] = ignoreMissing ? { line: '', code: EXIT.ok, toErr: false } : {
          line: `delete ${name}: no ${def.displayType} "${t.id}" in namespace ${namespace}`,
          code: EXIT.notFound, toErr: true,
        };
        return;
      }
      outcomes[i] = { line: `delete ${name}: ${(e as Error).message}`, code: exitCodeOf(e), toErr: true };
    }
  };
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(PARALLEL, targets.length) }, async () => {
    while (next < targets.length) {
      const i = next++;
      await one(targets[i]!, i);
    }
  }));
  let code: number = EXIT.ok;
  for (const o of outcomes) {
    if (o.line) (o.toErr ? err : out)(`${o.toErr ? 'cosictl: ' : ''}${o.line}\n`);
    // Unreachable beats refused beats not found: the worst outcome is the one a script must see.
    if (o.code !== EXIT.ok && (code === EXIT.ok || code === EXIT.notFound)) code = o.code;
  }
  return code;
}
