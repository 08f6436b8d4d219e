// definitions: the ResourceDefinitions of the built-in types, as proto/gen/resource-types.ts holds them (made
// from each spec message's (appliance.v1alpha1.resource) option): the engine's and each plugin's, by name.
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { DEFINITIONS_BY_SERVER } from '../../proto/gen/resource-types.ts';
import { copyPlain } from '../../cosi/state/freeze.ts';

/** The types `server` ("engine" or a built-in plugin's name) serves, fresh copies; none is an error. */
export function definitionsServedBy(server: string): DefinitionInput[] {
  const found = DEFINITIONS_BY_SERVER[server];
  if (!found) {
    throw new Error(`no resource type is served by "${server}" (the served_by of the (appliance.v1alpha1.resource) `
      + `options in proto/appliance name ${Object.keys(DEFINITIONS_BY_SERVER).join(', ')})`);
  }
  return found.map((d) => copyPlain(d));
}

/**
 * Every built-in type's name and spec message as declared, nothing copied: what a plugin's codecs need (copying every
 * definition took ~6 ms of each plugin process's start in the guest).
 */
export function builtinSpecMessages(): readonly Pick<DefinitionInput, 'type' | 'protoMessage'>[] {
  return Object.values(DEFINITIONS_BY_SERVER).flat();
}

/** Every built-in type's definition (the engine's and every built-in plugin's), without loading any plugin. */
export function allBuiltinDefinitions(): DefinitionInput[] {
  return Object.values(DEFINITIONS_BY_SERVER).flat().map((d) => copyPlain(d));
}

let serverByType: Map<string, string> | undefined;

/**
 * The servers ("engine" or a built-in plugin's name) of `types`, each once, in the order first met; a type that is
 * not built in (a user's, an extension's) has none.
 */
export function serversOf(types: Iterable<string>): string[] {
  serverByType ??= new Map(Object.entries(DEFINITIONS_BY_SERVER)
    .flatMap(([server, ds]) => ds.map((d) => [d.type, server] as const)));
  const servers = new Set<string>();
  for (const type of types) {
    const server = serverByType.get(type);
    if (server) servers.add(server);
  }
  return [...servers];
}
