// session: one connection to the API plus the resource definitions, which turn
// what the user typed ("links", "ns", "Motd") into a type and a default namespace.
import { didYouMean } from './did-you-mean.ts';
import {
  DEFINITION_TYPE, META_NAMESPACE, resolveDefinition, type ResourceDefinitionSpec,
} from '../cosi/meta/definition.ts';
import { RemoteState } from '../cosi/remote/client.ts';
import { META_CODECS } from '../cosi/remote/meta-codecs.ts';
import { chainCodecs } from '../cosi/spec/spec-codec.ts';
import { codecsFromDefinitions } from '../machinery/model/spec-codecs.ts';
import type { Context } from './config.ts';
import { CliError, EXIT } from './errors.ts';
import { StateError } from '../cosi/state/errors.ts';
import type { Resource } from '../cosi/resource/resource.ts';
import type { ResourceFilter } from '../cosi/state/query.ts';
import { timeMethods } from './timing.ts';

/** A call's deadline unless --timeout says otherwise: a machine that stops answering is given up on. */
export const DEFAULT_CALL_TIMEOUT_MS = 10_000;
/**
 * Calls the machine works on before it answers: applying a config (validated whole first) or a chunk of
 * an upgrade bundle (the last one is verified); a large one takes seconds on a small machine.
 */
const DEFAULT_LONG_CALL_TIMEOUT_MS = 60_000;
/**
 * An open watch pings the machine this often, and ends when a ping goes unanswered this long: a
 * machine that went away (powered off, its network gone) ends the watch instead of leaving it silent.
 */
const KEEPALIVE_MS = 5_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;

export class Session {
  readonly state: RemoteState;
  private defs: ResourceDefinitionSpec[] | undefined;
  /** The one List of definitions, however many ask at once. */
  private listing: Promise<ResourceDefinitionSpec[]> | undefined;

  /**
   * `timeoutMs`: --timeout, the deadline of the connection and of every call but a watch's (which
   * keepalive pings guard instead); DEFAULT_CALL_TIMEOUT_MS when not given.
   */
  constructor(readonly ctx: Context, readonly namespaceFlag?: string, readonly timeoutMs?: number) {
    // Specs of the types the machine defines travel as protobuf where this build knows the message.
    const codecs = codecsFromDefinitions(
      () => this.defs ?? [],
      (d, e) => process.stderr.write(`cosictl: ${d.type}: reading its specs as YAML (${e.message})\n`),
    );
    this.state = timeMethods(new RemoteState(ctx.endpoint, {
      codecs: chainCodecs(codecs, META_CODECS), timeoutMs: timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      keepaliveMs: KEEPALIVE_MS, keepaliveTimeoutMs: KEEPALIVE_TIMEOUT_MS,
      ...(ctx.tls ? { tls: ctx.tls } : {}),
    }), 'state');
  }

  /** The deadline of a call the machine works on before it answers: --timeout, else DEFAULT_LONG_CALL_TIMEOUT_MS. */
  get longCallMs(): number { return this.timeoutMs ?? DEFAULT_LONG_CALL_TIMEOUT_MS; }

  async connect(timeoutMs = 5000): Promise<void> {
    try {
      await this.state.waitReady(timeoutMs);
    } catch (e) {
      const refused = e instanceof StateError && e.code === 'unauthenticated';
      throw new CliError((e as Error).message, refused ? EXIT.refused : EXIT.unreachable, { cause: e });
    }
  }

  definitions(): Promise<ResourceDefinitionSpec[]> {
    this.listing ??= this.state.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE }).then((rs) => {
      this.defs = rs.map((r) => r.spec as ResourceDefinitionSpec);
      return this.defs;
    }, (e: unknown) => {
      this.listing = undefined;
      throw e;
    }); // the next caller asks again
    return this.listing;
  }

  async resolve(name: string): Promise<ResourceDefinitionSpec> {
    const defs = await this.definitions();
    const def = resolveDefinition(defs, name);
    if (def) return def;
    const displayOf = new Map(defs.flatMap((d) => [d.type, ...d.allAliases]
      .map((n) => [n.toLowerCase(), d.displayType.toLowerCase()] as const)));
    const near = didYouMean(name, displayOf.keys(), (n) => displayOf.get(n)!);
    throw new CliError(`unknown resource type "${name}"${near} (see \`cosictl api-resources\`)`, EXIT.notFound);
  }

  /**
   * The resource `id` of `def` in its namespace; a missing one is "no Motd "x" in namespace config" (exit 4),
   * after `what` (e.g. "edit motd/x") when given.
   */
  async getNamed(def: ResourceDefinitionSpec, id: string, what?: string): Promise<Resource> {
    const namespace = this.namespaceFor(def);
    try {
      return await this.state.get({ namespace, type: def.type, id });
    } catch (e) {
      if (e instanceof StateError && e.code === 'not-found') {
        throw new CliError(`${what ? `${what}: ` : ''}no ${def.displayType} "${id}" in namespace ${namespace}`,
          EXIT.notFound);
      }
      throw e;
    }
  }

  /** The types `get all` and `events` look through: every one but the meta namespace's (definitions, namespaces). */
  async browsableTypes(): Promise<ResourceDefinitionSpec[]> {
    return (await this.definitions()).filter((d) => d.defaultNamespace !== META_NAMESPACE);
  }

  /**
   * A List, or undefined when this client's role may not read the type: a command looking through every type
   * counts those (unreadableNote) rather than fail on the first.
   */
  async listReadable(
    kind: { namespace: string; type: string }, filter?: ResourceFilter,
  ): Promise<Resource[] | undefined> {
    try {
      return await this.state.list(kind, filter);
    } catch (e) {
      if (e instanceof StateError && e.code === 'permission-denied') return undefined;
      throw e;
    }
  }

  namespaceFor(def: ResourceDefinitionSpec): string {
    return this.namespaceFlag ?? this.defaultNamespaceOf(def);
  }

  /** Where a type's resources are unless -n says otherwise. */
  defaultNamespaceOf(def: ResourceDefinitionSpec): string {
    // A type registered without a default namespace (an upstream client's ResourceDefinition) takes the context's.
    return def.defaultNamespace || this.ctx.namespace || 'default';
  }

  close(): void { this.state.close(); }
}

/** What a command looking through every type says of the `n` types it could not read. */
export const unreadableNote = (n: number): string => `(${n} type(s) not shown: this client's role may not read them)\n`;
