// service: the grpc-js definition of cosi.resource.State, exact method paths
// included. Responses may be handed over pre-encoded (a Buffer) to skip re-encoding.
import type { ServiceDefinition } from '@grpc/grpc-js';
import { decode, encode, type MessageName } from './proto.ts';

export const STATE_SERVICE = 'cosi.resource.State';

function method(name: string, req: MessageName, res: MessageName, responseStream: boolean) {
  return {
    path: `/${STATE_SERVICE}/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: (o: object) => (Buffer.isBuffer(o) ? o : encode(req, o)),
    requestDeserialize: (b: Buffer) => decode(req, b),
    responseSerialize: (o: object) => (Buffer.isBuffer(o) ? o : encode(res, o)),
    responseDeserialize: (b: Buffer) => decode(res, b),
    originalName: name,
  };
}

export const stateServiceDefinition = {
  Get: method('Get', 'GetRequest', 'GetResponse', false),
  List: method('List', 'ListRequest', 'ListResponse', true),
  Create: method('Create', 'CreateRequest', 'CreateResponse', false),
  Update: method('Update', 'UpdateRequest', 'UpdateResponse', false),
  Destroy: method('Destroy', 'DestroyRequest', 'DestroyResponse', false),
  Watch: method('Watch', 'WatchRequest', 'WatchResponse', true),
  Teardown: method('Teardown', 'TeardownRequest', 'TeardownResponse', false),
  TeardownAndDestroy: method('TeardownAndDestroy', 'TeardownAndDestroyRequest', 'TeardownAndDestroyResponse', false),
} satisfies ServiceDefinition;
