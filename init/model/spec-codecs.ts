// spec-codecs: the protobuf messages of our resource specs (proto/appliance, compiled
// into proto/gen/spec-descriptors.ts) and the codecs of the types that name them.
import protobuf from 'protobufjs';
import type { DefinitionInput, ResourceDefinitionSpec } from '../cosi/meta/definition.ts';
import { codecForDefinition, definitionCodecs } from '../cosi/remote/definition-codecs.ts';
import { chainCodecs, staticCodecs, type SpecCodecs } from '../cosi/spec/spec-codec.ts';
import { specDescriptors } from '../../proto/gen/spec-descriptors.ts';

let root: protobuf.Root | undefined;

/** Every spec message this program carries (built on first use: PID 1 loads it in its api phase). */
export function specRoot(): protobuf.Root {
  root ??= protobuf.Root.fromJSON(specDescriptors as protobuf.INamespace);
  return root;
}

/** Definitions of built-in types, with the schema each derives from its message. */
export function withSchemas(defs: readonly DefinitionInput[]): DefinitionInput[] {
  return defs.map((d) => {
    if (!d.protoMessage) return d;
    const c = codecForDefinition({ type: d.type, protoMessage: d.protoMessage }, specRoot());
    return { ...d, ...(c.schema ? { schema: c.schema } : {}) };
  });
}

/** Codecs of a fixed set of built-in types (a plugin process knows every type it can meet). */
export function builtinCodecs(defs: readonly DefinitionInput[]): SpecCodecs {
  return staticCodecs(defs.flatMap((d) => (d.protoMessage
    ? [[d.type, codecForDefinition({ type: d.type, protoMessage: d.protoMessage }, specRoot())] as const]
    : [])));
}

/** Codecs from definitions a client read from the server, built-in messages first. */
export function codecsFromDefinitions(
  defs: () => readonly ResourceDefinitionSpec[], onUnusable: (def: ResourceDefinitionSpec, e: Error) => void, fallback?: SpecCodecs,
): SpecCodecs {
  const byType = () => new Map(defs().map((d) => [d.type, d]));
  let cache: { list: readonly ResourceDefinitionSpec[]; map: Map<string, ResourceDefinitionSpec> } | undefined;
  const lookup = (type: string) => {
    const list = defs();
    if (cache?.list !== list) cache = { list, map: byType() };
    return cache.map.get(type);
  };
  const fromDefs = definitionCodecs(specRoot(), lookup, onUnusable);
  return fallback ? chainCodecs(fromDefs, fallback) : fromDefs;
}
