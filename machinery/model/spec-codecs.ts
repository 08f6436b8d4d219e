// spec-codecs: the protobuf messages of our resource specs (proto/appliance, compiled
// into tables in proto/gen/spec-messages.ts) and the codecs of the types that name them.
import type { DefinitionInput, ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import { codecForDefinition, definitionCodecs } from '../../cosi/remote/definition-codecs.ts';
import { messageSet, type EnumInfo, type MessageInfo, type MessageSet } from '../../cosi/spec/message-info.ts';
import { chainCodecs, type SpecCodec, type SpecCodecs } from '../../cosi/spec/spec-codec.ts';
import { SPEC_ENUMS, SPEC_MESSAGES } from '../../proto/gen/spec-messages.ts';

let set: MessageSet | undefined;

/** Every spec message this program carries. */
export function specMessages(): MessageSet {
  set ??= messageSet(SPEC_MESSAGES as MessageInfo[], SPEC_ENUMS as EnumInfo[]);
  return set;
}

/** Definitions of built-in types, with the schema each derives from its message. */
export function withSchemas(defs: readonly DefinitionInput[]): DefinitionInput[] {
  return defs.map((d) => {
    if (!d.protoMessage) return d;
    const c = codecForDefinition({ type: d.type, protoMessage: d.protoMessage }, specMessages());
    return { ...d, ...(c.schema ? { schema: c.schema } : {}) };
  });
}

/** Codecs of a fixed set of built-in types (a plugin process knows every type it can meet), each built on first use. */
export function builtinCodecs(defs: readonly Pick<DefinitionInput, 'type' | 'protoMessage'>[]): SpecCodecs {
  const messages = new Map(defs.flatMap((d) => (d.protoMessage ? [[d.type, d.protoMessage] as const] : [])));
  const built = new Map<string, SpecCodec>();
  return {
    get(type) {
      const message = messages.get(type);
      if (!message) return undefined;
      let c = built.get(type);
      if (!c) {
        c = codecForDefinition({ type, protoMessage: message }, specMessages());
        built.set(type, c);
      }
      return c;
    },
  };
}

/** Codecs from definitions a client read from the server, built-in messages first. */
export function codecsFromDefinitions(
  defs: () => readonly ResourceDefinitionSpec[], onUnusable: (def: ResourceDefinitionSpec, e: Error) => void,
  fallback?: SpecCodecs,
): SpecCodecs {
  let cache: { list: readonly ResourceDefinitionSpec[]; map: Map<string, ResourceDefinitionSpec> } | undefined;
  const lookup = (type: string) => {
    const list = defs();
    if (cache?.list !== list) cache = { list, map: new Map(list.map((d) => [d.type, d])) };
    return cache.map.get(type);
  };
  const fromDefs = definitionCodecs(specMessages(), lookup, onUnusable);
  return fallback ? chainCodecs(fromDefs, fallback) : fromDefs;
}
