// request-pointer: the resource a State call names, read from its request bytes. For
// whoever wraps the State's methods and must say what a call touched (the engine's
// audit log) without knowing the State's messages; the service itself needs none of it.
import type { Pointer } from '../resource/resource.ts';
import type { WireResource } from './codec.ts';
import { decode } from './wire.ts';
import { STATE_METHODS, type StateMethod } from './service.ts';

/** The fields of the State's requests that name a resource. */
interface NamingRequest {
  namespace: string;
  type: string;
  id?: string;
  resource?: WireResource;
  new_resource?: WireResource;
}

const wirePointer = (w: WireResource | undefined): Pointer => ({
  namespace: w?.metadata?.namespace ?? '', type: w?.metadata?.type ?? '', id: w?.metadata?.id ?? '',
});

/**
 * The resource a request of State method `name` names: a Create's or an Update's, what its resource's metadata
 * says; a List's, its type (id ""); a Watch's, its type and the id if it has one. Undefined when `request` is not
 * such a request at all.
 */
export function requestPointer(name: StateMethod, request: Uint8Array): Pointer | undefined {
  let req: NamingRequest;
  try {
    req = decode<NamingRequest>(STATE_METHODS[name].request, request);
  } catch {
    // The method refuses the same bytes itself (INVALID_ARGUMENT, in the decoder's words): no resource is named.
    return undefined;
  }
  switch (name) {
    case 'Create': return wirePointer(req.resource);
    case 'Update': return wirePointer(req.new_resource);
    case 'List': return { namespace: req.namespace, type: req.type, id: '' };
    // Get's, Destroy's and Teardown's id is always there (proto3: "" when unset); a Watch's may be absent.
    default: return { namespace: req.namespace, type: req.type, id: req.id ?? '' };
  }
}
