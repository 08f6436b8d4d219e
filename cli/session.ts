// session: one connection to the API plus the resource definitions, which turn
// what the user typed ("links", "ns", "Motd") into a type and a default namespace.
import {
  DEFINITION_TYPE, META_NAMESPACE, resolveDefinition, type ResourceDefinitionSpec,
} from '../init/cosi/meta/definition.ts';
import { RemoteState } from '../init/cosi/remote/client.ts';
import { META_CODECS } from '../init/cosi/remote/meta-codecs.ts';
import { chainCodecs } from '../init/cosi/spec/spec-codec.ts';
import { codecsFromDefinitions } from '../init/model/spec-codecs.ts';
import type { Context } from './config.ts';
import { CliError, EXIT } from './errors.ts';

export class Session {
  readonly state: RemoteState;
  private defs: ResourceDefinitionSpec[] | undefined;

  /** `timeoutMs`: the deadline of every call (none by default: a watch or a slow apply may take long). */
  constructor(readonly ctx: Context, readonly namespaceFlag?: string, timeoutMs?: number) {
    // Specs of the types the machine defines travel as protobuf where this build knows the message.
    const codecs = codecsFromDefinitions(
      () => this.defs ?? [],
      (d, e) => process.stderr.write(`cosictl: ${d.type}: reading its specs as YAML (${e.message})\n`),
    );
    this.state = new RemoteState(ctx.endpoint, {
      codecs: chainCodecs(codecs, META_CODECS), ...(timeoutMs ? { timeoutMs } : {}),
      ...(ctx.tls ? { tls: ctx.tls } : {}),
    });
  }

  async connect(timeoutMs = 5000): Promise<void> {
    try { await this.state.waitReady(timeoutMs); } catch (e) {
      throw new CliError((e as Error).message, EXIT.unreachable);
    }
  }

  async definitions(): Promise<ResourceDefinitionSpec[]> {
    this.defs ??= (await this.state.list({ namespace: META_NAMESPACE, type: DEFINITION_TYPE }))
      .map((r) => r.spec as ResourceDefinitionSpec);
    return this.defs;
  }

  async resolve(name: string): Promise<ResourceDefinitionSpec> {
    const def = resolveDefinition(await this.definitions(), name);
    if (!def) throw new CliError(`unknown resource type "${name}" (see \`cosictl api-resources\`)`, EXIT.notFound);
    return def;
  }

  namespaceFor(def: ResourceDefinitionSpec): string {
    return this.namespaceFlag ?? def.defaultNamespace ?? this.ctx.namespace ?? 'default';
  }

  close(): void { this.state.close(); }
}
