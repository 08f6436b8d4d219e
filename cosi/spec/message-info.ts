// message-info: what the spec codecs know of a protobuf message: its fields (number,
// type, cardinality, presence), their comments and rules. A plain table, generated for
// our own messages at build time (scripts/gen-proto.ts) and converted from a
// FileDescriptorSet for a user's; protobufjs's reflection objects cost megabytes per
// process, this a few kilobytes.
import type { StringFormat } from '../meta/schema.ts';

export type ScalarKind = 'string' | 'bytes' | 'bool' | 'double' | 'float'
  | 'int32' | 'uint32' | 'sint32' | 'fixed32' | 'sfixed32' | 'int64' | 'uint64' | 'sint64' | 'fixed64' | 'sfixed64';

export interface FieldRules {
  required?: boolean; pattern?: string; patternHelp?: string; format?: StringFormat;
  minimum?: number; maximum?: number; maxItems?: number; maxLength?: number;
}

export interface FieldInfo {
  /** The field's name in the .proto (snake_case). */
  name: string;
  /** Its key in the object form (lowerCamelCase, the proto3 JSON name). */
  key: string;
  number: number;
  /** A scalar, or 'enum' / 'message' naming `type`. */
  kind: ScalarKind | 'enum' | 'message';
  /** The full name (no leading dot) of the enum or message. */
  type?: string;
  repeated?: boolean;
  /** A map field: the key's scalar kind (the value is kind/type). */
  mapKey?: ScalarKind;
  /** proto3 `optional`: present only when set (messages always track presence). */
  optional?: boolean;
  comment?: string;
  rules?: FieldRules;
}

export interface MessageInfo {
  name: string; comment?: string; fields: FieldInfo[];
  /** The field the resource's id stands in for when unset: the id follows its rules. */
  idField?: string;
}
export interface EnumInfo {
  name: string; comment?: string; values: { name: string; number: number; comment?: string }[];
}

/** Messages and enums by full name (no leading dot). */
export interface MessageSet {
  messages: ReadonlyMap<string, MessageInfo>;
  enums: ReadonlyMap<string, EnumInfo>;
}

export const TIMESTAMP = 'google.protobuf.Timestamp';

/** The well-known Timestamp, which every set may refer to. */
export const TIMESTAMP_INFO: MessageInfo = {
  name: TIMESTAMP,
  fields: [
    { name: 'seconds', key: 'seconds', number: 1, kind: 'int64' },
    { name: 'nanos', key: 'nanos', number: 2, kind: 'int32' },
  ],
};

/** snake_case -> lowerCamelCase, as protoc computes json_name. */
export function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** FOO_BAR_BAZ of enum FooBar -> "baz": a value's name in the object form (the 0 value is "not set"). */
export function enumValueName(enumName: string, value: string): string {
  const prefix = `${enumName.replace(/^.*\./, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}_`;
  return (value.startsWith(prefix) ? value.slice(prefix.length) : value).toLowerCase().replace(/_/g, '-');
}

/** A set from tables (the generated one, or one converted from a descriptor), with Timestamp. */
export function messageSet(messages: readonly MessageInfo[], enums: readonly EnumInfo[]): MessageSet {
  return {
    messages: new Map([[TIMESTAMP, TIMESTAMP_INFO], ...messages.map((m) => [m.name, m] as const)]),
    enums: new Map(enums.map((e) => [e.name, e])),
  };
}
