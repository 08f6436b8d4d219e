// definition-codecs: finds a type's spec codec through its ResourceDefinition. The
// meta types have their own; a definition naming a protobuf message gets a proto codec
// (the message looked up among the messages this program carries, else in the
// definition's own descriptor); one with a schema gets a schema codec; any other type
// is free-form. Codecs are kept per definition object, which the state never mutates.
import { DEFINITION_TYPE, NAMESPACE_TYPE, type ResourceDefinitionSpec } from '../meta/definition.ts';
import { StateError } from '../state/errors.ts';
import { readDescriptorSet } from '../spec/descriptor-set.ts';
import type { MessageSet } from '../spec/message-info.ts';
import { FREE_FORM, protoCodec, schemaCodec, type SpecCodec, type SpecCodecs } from '../spec/spec-codec.ts';
import { DEFINITION_CODEC, NAMESPACE_CODEC } from './meta-codecs.ts';

/** The messages of a base64 FileDescriptorSet; throws invalid-argument when it cannot be read. */
export function setFromDescriptor(descriptor: string, message: string): MessageSet {
  try {
    return readDescriptorSet(Buffer.from(descriptor, 'base64'));
  } catch (e) {
    throw new StateError('invalid-argument',
      `protoDescriptor is not a usable FileDescriptorSet: ${(e as Error).message}`, message, { cause: e });
  }
}

/**
 * The message `name`, from `builtin` or else from a base64 FileDescriptorSet; throws invalid-argument naming
 * what is missing.
 */
export function findMessage(builtin: MessageSet | undefined, name: string, descriptor?: string): MessageSet {
  if (builtin?.messages.has(name)) return builtin;
  if (!descriptor) {
    throw new StateError('invalid-argument', `protoMessage "${name}" is not a message this machine knows; `
      + 'add protoDescriptor (a FileDescriptorSet holding it, base64)', name);
  }
  const set = setFromDescriptor(descriptor, name);
  if (!set.messages.has(name)) {
    throw new StateError('invalid-argument', `protoDescriptor holds no message "${name}"`, name);
  }
  return set;
}

/** The codec a definition calls for (throws invalid-argument when its message cannot be found or used). */
export function codecForDefinition(
  def: Pick<ResourceDefinitionSpec, 'type' | 'protoMessage' | 'protoDescriptor' | 'schema'>,
  builtin: MessageSet | undefined,
): SpecCodec {
  if (def.type === NAMESPACE_TYPE) return NAMESPACE_CODEC;
  if (def.type === DEFINITION_TYPE) return DEFINITION_CODEC;
  if (def.protoMessage) {
    const set = findMessage(builtin, def.protoMessage, def.protoDescriptor);
    try {
      return protoCodec(set, def.protoMessage);
    } catch (e) {
      throw new StateError('invalid-argument', (e as Error).message, def.protoMessage, { cause: e });
    }
  }
  return def.schema ? schemaCodec(def.schema) : FREE_FORM;
}

/**
 * Codecs of whatever types `lookup` finds a definition for. The server admits only
 * definitions whose message it can use; a client that cannot use one (its descriptor
 * names what this client cannot compile) falls back to the YAML and is told why.
 */
export function definitionCodecs(
  builtin: MessageSet | undefined,
  lookup: (type: string) => ResourceDefinitionSpec | undefined,
  onUnusable: (def: ResourceDefinitionSpec, e: Error) => void,
): SpecCodecs {
  const cache = new WeakMap<ResourceDefinitionSpec, SpecCodec>();
  return {
    get(type) {
      if (type === NAMESPACE_TYPE) return NAMESPACE_CODEC;
      if (type === DEFINITION_TYPE) return DEFINITION_CODEC;
      const def = lookup(type);
      if (!def) return undefined;
      let c = cache.get(def);
      if (!c) {
        try {
          c = codecForDefinition(def, builtin);
        } catch (e) {
          onUnusable(def, e as Error);
          c = def.schema ? schemaCodec(def.schema) : FREE_FORM;
        }
        cache.set(def, c);
      }
      return c;
    },
  };
}
