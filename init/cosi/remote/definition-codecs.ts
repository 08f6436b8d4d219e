// definition-codecs: finds a type's spec codec through its ResourceDefinition. The
// meta types have their own; a definition naming a protobuf message gets a proto codec
// (the message looked up among the messages this program carries, else in the
// definition's own descriptor); one with a schema gets a schema codec; any other type
// is free-form. Codecs are kept per definition object, which the state never mutates.
import protobuf from 'protobufjs';
import descriptorExt from 'protobufjs/ext/descriptor/index.js';
import { DEFINITION_TYPE, NAMESPACE_TYPE, type ResourceDefinitionSpec } from '../meta/definition.ts';
import { StateError } from '../state/errors.ts';
import { FREE_FORM, protoCodec, schemaCodec, type SpecCodec, type SpecCodecs } from '../spec/spec-codec.ts';
import { DEFINITION_CODEC, NAMESPACE_CODEC } from './meta-codecs.ts';

// The import registers Root.fromDescriptor on protobufjs; keep the binding used.
void descriptorExt;

type FromDescriptor = { fromDescriptor(d: Uint8Array): protobuf.Root };

/** The message `name`, from `root` or else from a base64 FileDescriptorSet; throws invalid-argument naming what is missing. */
export function findMessage(root: protobuf.Root | undefined, name: string, descriptor?: string): protobuf.Type {
  const look = (r: protobuf.Root) => { const t = r.lookup(name); return t instanceof protobuf.Type ? t : undefined; };
  const known = root && look(root);
  if (known) return known;
  if (!descriptor) throw new StateError('invalid-argument', `protoMessage "${name}" is not a message this machine knows; add protoDescriptor (a FileDescriptorSet holding it, base64)`, name);
  let r: protobuf.Root;
  try {
    r = (protobuf.Root as unknown as FromDescriptor).fromDescriptor(Buffer.from(descriptor, 'base64'));
    r.resolveAll();
  } catch (e) {
    throw new StateError('invalid-argument', `protoDescriptor is not a usable FileDescriptorSet: ${(e as Error).message}`, name, { cause: e });
  }
  const t = look(r);
  if (!t) throw new StateError('invalid-argument', `protoDescriptor holds no message "${name}"`, name);
  return t;
}

/** The codec a definition calls for (throws invalid-argument when its message cannot be found or used). */
export function codecForDefinition(
  def: Pick<ResourceDefinitionSpec, 'type' | 'protoMessage' | 'protoDescriptor' | 'schema'>, root: protobuf.Root | undefined,
): SpecCodec {
  if (def.type === NAMESPACE_TYPE) return NAMESPACE_CODEC;
  if (def.type === DEFINITION_TYPE) return DEFINITION_CODEC;
  if (def.protoMessage) {
    const type = findMessage(root, def.protoMessage, def.protoDescriptor);
    try { return protoCodec(type); } catch (e) { throw new StateError('invalid-argument', (e as Error).message, def.protoMessage, { cause: e }); }
  }
  return def.schema ? schemaCodec(def.schema) : FREE_FORM;
}

/**
 * Codecs of whatever types `lookup` finds a definition for. The server admits only
 * definitions whose message it can use; a client that cannot use one (its descriptor
 * names what this client cannot compile) falls back to the YAML and is told why.
 */
export function definitionCodecs(
  root: protobuf.Root | undefined,
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
        try { c = codecForDefinition(def, root); } catch (e) {
          onUnusable(def, e as Error);
          c = def.schema ? schemaCodec(def.schema) : FREE_FORM;
        }
        cache.set(def, c);
      }
      return c;
    },
  };
}
