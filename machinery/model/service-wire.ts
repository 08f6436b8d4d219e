// service-wire: our own gRPC services on the wire, for the engine, which serves them, and cosictl: each method of
// proto/gen/services.ts (made from the `service` blocks of proto/appliance) with the codecs of its request and
// response, through the same table codec as the resource specs.
import {
  CONFIG_SERVICE, EXTENSION_SERVICE, LOG_SERVICE, MACHINE_SERVICE, UPGRADE_SERVICE, type ServiceMethod,
} from '../../proto/gen/services.ts';
import { serviceCodec, type MessageCodec } from './service-codec.ts';

export interface MethodWire<Req, Res> {
  path: string;
  request: MessageCodec<Req>;
  response: MessageCodec<Res>;
  responseStream: boolean;
}

type Wired<S> = { [K in keyof S]: S[K] extends ServiceMethod<infer Req, infer Res> ? MethodWire<Req, Res> : never };

/** Each method of a service with its codecs. */
function wired<S extends Record<string, ServiceMethod<unknown, unknown>>>(service: S): Wired<S> {
  const out: Record<string, MethodWire<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(service)) {
    out[name] = {
      path: m.path, request: serviceCodec(m.request), response: serviceCodec(m.response),
      responseStream: m.responseStream,
    };
  }
  return out as Wired<S>;
}

export const CONFIG_RPC = wired(CONFIG_SERVICE);
export const LOG_RPC = wired(LOG_SERVICE);
export const MACHINE_RPC = wired(MACHINE_SERVICE);
export const UPGRADE_RPC = wired(UPGRADE_SERVICE);
export const EXTENSION_RPC = wired(EXTENSION_SERVICE);

/** What calls a unary method (RemoteState): the request's bytes in, the answer's out. */
export interface UnaryCaller { unary(path: string, request: Uint8Array, deadlineMs?: number): Promise<Uint8Array> }

/** Calls a unary method: the request encoded, the answer decoded. */
export async function callUnary<Req, Res>(
  caller: UnaryCaller, m: MethodWire<Req, Res>, request: Req, deadlineMs?: number,
): Promise<Res> {
  return m.response.decode(await caller.unary(m.path, m.request.encode(request), deadlineMs));
}

/**
 * The largest chunk an UpgradeService/Upload or ExtensionService/Push call carries; the API's request limit leaves
 * room for it.
 */
export const UPLOAD_CHUNK_MAX = 1 << 20;
