// spec-codec: how the spec of one resource type travels and is checked. A type with
// a protobuf message travels as proto_spec and yaml_spec both, and is validated by the
// schema derived from the message; a type with only a schema (user-defined) or with
// neither (free-form) travels as YAML. The registry finds a type's codec from its
// ResourceDefinition.
import { StateError } from '../state/errors.ts';
import { validateSpec, type SpecSchema } from '../meta/schema.ts';
import type { MessageSet } from './message-info.ts';
import { messagePlan } from './proto-object.ts';
import { schemaFromMessage } from './schema-from-proto.ts';
import { yamlText } from './yaml-text.ts';

export interface SpecCodec {
  /** The full name of the spec's protobuf message, when the type has one. */
  readonly message?: string;
  /** The schema specs are validated against (derived from the message when there is one). */
  readonly schema?: SpecSchema;
  /** The object form -> proto_spec; undefined when the type has no message. */
  toProto(spec: unknown): Uint8Array | undefined;
  /** proto_spec -> the object form; throws invalid-argument on bytes that are not the message. */
  fromProto(bytes: Uint8Array): unknown;
  /** The object form -> yaml_spec. */
  toYaml(spec: unknown): string;
  /** Problems of a parsed value ("spec.mtu: must be <= 65535, got 70000"); empty when valid. */
  validate(value: unknown): string[];
  /** A valid value -> its object form (defaults filled, empty lists dropped, keys in field order). */
  normalize(value: unknown): unknown;
  /**
   * A spec sent as both proto_spec and yaml_spec (each decoded and normalized): the
   * spec to keep, or a list of where they disagree. Default: they must be equal.
   */
  combine?(fromProto: unknown, fromYaml: unknown): { spec: unknown } | { disagree: string[] };
}

/** A type's codec, or undefined for a type the registry does not know. */
export interface SpecCodecs { get(type: string): SpecCodec | undefined }

/** The codec of message `name` of `set` (throws when the set lacks it or one it refers to). */
export function protoCodec(set: MessageSet, name: string): SpecCodec {
  const plan = messagePlan(set, name);
  const schema = schemaFromMessage(set, name);
  const short = name.replace(/^.*\./, '');
  return {
    message: name,
    schema,
    toProto: (spec) => plan.encode(spec as Record<string, unknown>),
    fromProto(bytes) {
      try {
        return plan.decode(bytes);
      } catch (e) {
        throw new StateError('invalid-argument', `proto_spec is not a ${short}: ${(e as Error).message}`, name,
          { cause: e });
      }
    },
    toYaml: yamlText,
    validate: (v) => validateSpec(schema, v),
    normalize: (v) => plan.normalize(v as Record<string, unknown>),
  };
}

/** A type validated by a schema of its own, travelling as YAML. */
export function schemaCodec(schema: SpecSchema): SpecCodec {
  return {
    schema,
    toProto: () => undefined,
    fromProto: () => { throw new StateError('invalid-argument', 'this type has no protobuf message: send yaml_spec'); },
    toYaml: yamlText,
    validate: (v) => validateSpec(schema, v),
    normalize: (v) => v,
  };
}

/** A type without a schema: any YAML value is its spec. */
export const FREE_FORM: SpecCodec = {
  toProto: () => undefined,
  fromProto: () => { throw new StateError('invalid-argument', 'this type has no protobuf message: send yaml_spec'); },
  toYaml: yamlText,
  validate: () => [],
  normalize: (v) => v,
};

/** Codecs of a fixed set of types (a client that knows its types up front). */
export function staticCodecs(entries: Iterable<[string, SpecCodec]>): SpecCodecs {
  const m = new Map(entries);
  return { get: (type) => m.get(type) };
}

/** Codecs in order: the first that knows a type answers. */
export function chainCodecs(...all: SpecCodecs[]): SpecCodecs {
  return { get: (type) => {
    for (const c of all) {
      const x = c.get(type);
      if (x) return x;
    }
    return undefined;
  } };
}
