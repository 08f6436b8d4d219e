// service-codec: the messages of our own gRPC services (proto/appliance/*_service.proto) in their object
// form, through the same table codec as the resource specs; shared by the engine, which serves them, and
// cosictl.
import { messagePlan, type MessagePlan } from '../../cosi/spec/proto-object.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { specMessages } from './spec-codecs.ts';

type Obj = Record<string, unknown>;
const plans = new Map<string, MessagePlan>();
const plan = (name: string) => {
  let p = plans.get(name);
  if (!p) {
    p = messagePlan(specMessages(), name);
    plans.set(name, p);
  }
  return p;
};

export interface MessageCodec<T> { encode(m: T): Uint8Array; decode(b: Uint8Array): T }

/** decode throws invalid-argument for bytes that are not the message (a client's mistake, not ours). */
export function serviceCodec<T>(name: string): MessageCodec<T> {
  return {
    encode: (m) => plan(name).encode(m as Obj),
    decode(b) {
      try {
        return plan(name).decode(b) as T;
      } catch (e) {
        throw new StateError('invalid-argument', `the request is not a ${name.replace(/^.*\./, '')}: `
          + `${(e as Error).message}`, name, { cause: e });
      }
    },
  };
}

