// descriptor-set: a google.protobuf.FileDescriptorSet (what `protoc --descriptor_set_out`
// writes, what a user-defined type may bring) -> message tables. Decoded with our own
// table-driven codec, from the few fields of descriptor.proto that describe messages,
// fields and enums; source comments and options are not read.
import {
  messageSet, jsonName, type EnumInfo, type FieldInfo, type MessageInfo, type MessageSet, type ScalarKind,
} from './message-info.ts';
import { wireCodec } from './proto-wire.ts';

const DESCRIPTOR = 'google.protobuf';
const f = (name: string, number: number, kind: FieldInfo['kind'], extra: Partial<FieldInfo> = {}): FieldInfo =>
  ({ name, key: jsonName(name), number, kind, ...extra });
const msg = (n: string, fields: FieldInfo[]): MessageInfo => ({ name: `${DESCRIPTOR}.${n}`, fields });
const ref = (n: string) => `${DESCRIPTOR}.${n}`;

/** The part of descriptor.proto this reader needs (field numbers as in descriptor.proto). */
const DESCRIPTOR_SET: MessageSet = messageSet([
  msg('FileDescriptorSet', [f('file', 1, 'message', { type: ref('FileDescriptorProto'), repeated: true })]),
  msg('FileDescriptorProto', [
    f('name', 1, 'string'), f('package', 2, 'string'),
    f('message_type', 4, 'message', { type: ref('DescriptorProto'), repeated: true }),
    f('enum_type', 5, 'message', { type: ref('EnumDescriptorProto'), repeated: true }),
    f('syntax', 12, 'string'),
  ]),
  msg('DescriptorProto', [
    f('name', 1, 'string'),
    f('field', 2, 'message', { type: ref('FieldDescriptorProto'), repeated: true }),
    f('nested_type', 3, 'message', { type: ref('DescriptorProto'), repeated: true }),
    f('enum_type', 4, 'message', { type: ref('EnumDescriptorProto'), repeated: true }),
    f('options', 7, 'message', { type: ref('MessageOptions') }),
    f('oneof_decl', 8, 'message', { type: ref('OneofDescriptorProto'), repeated: true }),
  ]),
  msg('MessageOptions', [f('map_entry', 7, 'bool')]),
  msg('OneofDescriptorProto', [f('name', 1, 'string')]),
  msg('FieldDescriptorProto', [
    f('name', 1, 'string'), f('number', 3, 'int32'), f('label', 4, 'int32'), f('type', 5, 'int32'),
    f('type_name', 6, 'string'),
    f('oneof_index', 9, 'int32', { optional: true }), f('json_name', 10, 'string'), f('proto3_optional', 17, 'bool'),
  ]),
  msg('EnumDescriptorProto', [
    f('name', 1, 'string'), f('value', 2, 'message', { type: ref('EnumValueDescriptorProto'), repeated: true }),
  ]),
  msg('EnumValueDescriptorProto', [f('name', 1, 'string'), f('number', 2, 'int32')]),
], []);

interface RawField {
  name?: string; number?: number; label?: number; type?: number; typeName?: string; jsonName?: string;
  proto3Optional?: boolean;
}
interface RawMessage {
  name?: string; field?: RawField[]; nestedType?: RawMessage[]; enumType?: RawEnum[]; options?: { mapEntry?: boolean };
}
interface RawEnum { name?: string; value?: { name?: string; number?: number }[] }
interface RawFile { package?: string; messageType?: RawMessage[]; enumType?: RawEnum[] }

/** FieldDescriptorProto.Type numbers -> our kinds (10 = group: not supported). */
const TYPES: Record<number, ScalarKind | 'enum' | 'message'> = {
  1: 'double', 2: 'float', 3: 'int64', 4: 'uint64', 5: 'int32', 6: 'fixed64', 7: 'fixed32', 8: 'bool', 9: 'string',
  11: 'message', 12: 'bytes', 13: 'uint32', 14: 'enum', 15: 'sfixed32', 16: 'sfixed64', 17: 'sint32', 18: 'sint64',
};
const LABEL_REPEATED = 3;

/** The messages and enums of a serialized FileDescriptorSet; throws naming what it cannot read. */
export function readDescriptorSet(bytes: Uint8Array): MessageSet {
  const set = wireCodec(DESCRIPTOR_SET, ref('FileDescriptorSet')).decode(bytes) as { file?: RawFile[] };
  const messages: MessageInfo[] = [];
  const enums: EnumInfo[] = [];
  const mapEntries = new Map<string, RawMessage>();
  const collect = (prefix: string, ms: RawMessage[] = [], es: RawEnum[] = []) => {
    for (const e of es) {
      enums.push({
        name: `${prefix}${e.name}`,
        values: (e.value ?? []).map((v) => ({ name: v.name ?? '', number: v.number ?? 0 })),
      });
    }
    for (const m of ms) {
      const full = `${prefix}${m.name}`;
      if (m.options?.mapEntry) mapEntries.set(full, m);
      collect(`${full}.`, m.nestedType, m.enumType);
    }
  };
  for (const file of set.file ?? []) collect(file.package ? `${file.package}.` : '', file.messageType, file.enumType);
  const fieldOf = (owner: string, raw: RawField): FieldInfo => {
    const kind = TYPES[raw.type ?? 0];
    if (!kind) throw new Error(`${owner}.${raw.name}: field type ${raw.type} is not supported (groups are not)`);
    const base: FieldInfo = {
      name: raw.name ?? '', key: raw.jsonName || jsonName(raw.name ?? ''), number: raw.number ?? 0, kind,
    };
    if (kind === 'enum' || kind === 'message') base.type = (raw.typeName ?? '').replace(/^\./, '');
    if (raw.proto3Optional) base.optional = true;
    const entry = kind === 'message' ? mapEntries.get(base.type!) : undefined;
    if (entry && raw.label === LABEL_REPEATED) {
      const k = entry.field?.find((x) => x.number === 1);
      const v = entry.field?.find((x) => x.number === 2);
      if (!k || !v) throw new Error(`${owner}.${raw.name}: map entry ${base.type} lacks its key or value`);
      const value = fieldOf(owner, v);
      const { type: _entry, ...rest } = base;
      return {
        ...rest, kind: value.kind, ...(value.type ? { type: value.type } : {}),
        mapKey: TYPES[k.type ?? 0] as ScalarKind,
      };
    }
    if (raw.label === LABEL_REPEATED) base.repeated = true;
    return base;
  };
  const walk = (prefix: string, ms: RawMessage[] = []) => {
    for (const m of ms) {
      const full = `${prefix}${m.name}`;
      if (!mapEntries.has(full)) messages.push({ name: full, fields: (m.field ?? []).map((x) => fieldOf(full, x)) });
      walk(`${full}.`, m.nestedType);
    }
  };
  for (const file of set.file ?? []) walk(file.package ? `${file.package}.` : '', file.messageType);
  return messageSet(messages.filter((m) => m.name !== 'google.protobuf.Timestamp'), enums);
}
