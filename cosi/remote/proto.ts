// proto: the protobufjs message types of the COSI wire API, built from the generated
// descriptors (scripts/gen-proto.ts). Field names keep the .proto's snake_case.
import Long from 'long';
import protobuf from 'protobufjs';
import { wireDescriptors } from '../../proto/gen/wire-descriptors.ts';

// protobufjs finds `long` through a dynamic require that a bundle cannot follow;
// hand it over so int64 fields (timestamps) decode the same bundled or not.
protobuf.util.Long = Long as unknown as typeof protobuf.util.Long;
protobuf.configure();

const root = protobuf.Root.fromJSON(wireDescriptors as unknown as protobuf.INamespace);
const t = (name: string) => root.lookupType(name);

export const Msg = {
  Resource: t('cosi.resource.Resource'),
  GetRequest: t('cosi.resource.GetRequest'), GetResponse: t('cosi.resource.GetResponse'),
  ListRequest: t('cosi.resource.ListRequest'), ListResponse: t('cosi.resource.ListResponse'),
  CreateRequest: t('cosi.resource.CreateRequest'), CreateResponse: t('cosi.resource.CreateResponse'),
  UpdateRequest: t('cosi.resource.UpdateRequest'), UpdateResponse: t('cosi.resource.UpdateResponse'),
  DestroyRequest: t('cosi.resource.DestroyRequest'), DestroyResponse: t('cosi.resource.DestroyResponse'),
  WatchRequest: t('cosi.resource.WatchRequest'), WatchResponse: t('cosi.resource.WatchResponse'),
  TeardownRequest: t('cosi.resource.TeardownRequest'), TeardownResponse: t('cosi.resource.TeardownResponse'),
  TeardownAndDestroyRequest: t('cosi.resource.TeardownAndDestroyRequest'),
  TeardownAndDestroyResponse: t('cosi.resource.TeardownAndDestroyResponse'),
  NamespaceSpec: t('cosi.resource.meta.NamespaceSpec'),
  ResourceDefinitionSpec: t('cosi.resource.meta.ResourceDefinitionSpec'),
} as const;

export type MessageName = keyof typeof Msg;

/** Encodes a plain object (fields named as in the .proto). */
export function encode(name: MessageName, obj: object): Buffer {
  const type = Msg[name];
  return Buffer.from(type.encode(type.fromObject(obj as Record<string, unknown>)).finish());
}

/** Decodes to a message object: unset scalars read as their defaults; presence via hasOwnProperty. */
export function decode<T = Record<string, unknown>>(name: MessageName, buf: Uint8Array): T {
  return Msg[name].decode(buf) as unknown as T;
}

/** Field presence of a decoded message (proto3 `optional` fields, sub-messages). */
export function has(msg: object, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(msg, field);
}
