// wire: the COSI wire API's messages (proto/v1alpha1) through the same table codec as our specs
// (cosi/spec/proto-wire.ts), from the tables scripts/gen-proto.ts makes of the .proto files. Objects keep the
// .proto's snake_case names, enums as numbers and timestamps as milliseconds since the epoch; a field without
// presence reads as its default when absent,
// as protobuf's generated code has it; `has` tells whether a field with presence was sent.
import { WIRE_MESSAGES } from '../../proto/gen/wire-messages.ts';
import { messageSet, type MessageInfo } from '../spec/message-info.ts';
import { wireCodec, type WireCodec } from '../spec/proto-wire.ts';

export { preEncoded } from '../spec/proto-wire.ts';

const FULL_NAMES = {
  Resource: 'cosi.resource.Resource',
  GetRequest: 'cosi.resource.GetRequest', GetResponse: 'cosi.resource.GetResponse',
  ListRequest: 'cosi.resource.ListRequest', ListResponse: 'cosi.resource.ListResponse',
  CreateRequest: 'cosi.resource.CreateRequest', CreateResponse: 'cosi.resource.CreateResponse',
  UpdateRequest: 'cosi.resource.UpdateRequest', UpdateResponse: 'cosi.resource.UpdateResponse',
  DestroyRequest: 'cosi.resource.DestroyRequest', DestroyResponse: 'cosi.resource.DestroyResponse',
  WatchRequest: 'cosi.resource.WatchRequest', WatchResponse: 'cosi.resource.WatchResponse',
  TeardownRequest: 'cosi.resource.TeardownRequest', TeardownResponse: 'cosi.resource.TeardownResponse',
  TeardownAndDestroyRequest: 'cosi.resource.TeardownAndDestroyRequest',
  TeardownAndDestroyResponse: 'cosi.resource.TeardownAndDestroyResponse',
  NamespaceSpec: 'cosi.resource.meta.NamespaceSpec',
  ResourceDefinitionSpec: 'cosi.resource.meta.ResourceDefinitionSpec',
} as const;

export type MessageName = keyof typeof FULL_NAMES;

const SET = messageSet(WIRE_MESSAGES as MessageInfo[], []);
const codecs = new Map<MessageName, WireCodec>();
const codecOf = (name: MessageName): WireCodec => {
  let c = codecs.get(name);
  if (!c) {
    c = wireCodec(SET, FULL_NAMES[name], { defaults: true, timestamps: 'millis' });
    codecs.set(name, c);
  }
  return c;
};

/** Encodes a plain object (fields named as in the .proto; a message field may be `preEncoded` bytes). */
export function encode(name: MessageName, obj: object): Buffer {
  return codecOf(name).encode(obj as Record<string, unknown>);
}

/** Decodes to a plain object: fields without presence at their defaults when absent; others absent. */
export function decode<T = Record<string, unknown>>(name: MessageName, buf: Uint8Array): T {
  return codecOf(name).decode(buf) as T;
}

/** Whether a decoded message carries a field with presence (proto3 `optional` fields, sub-messages). */
export function has(msg: object, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(msg, field);
}
