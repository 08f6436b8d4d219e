// config-service-wire: appliance.config.v1alpha1.ConfigService on the wire
// (proto/appliance/config/v1alpha1/config_service.proto), shared by the engine, which
// serves it, and cosictl. Messages travel through our table codec in their object form.
import type {
  ApplyConfigRequest, ApplyConfigResponse, ConfirmConfigResponse,
} from '../../proto/gen/spec-types.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { messagePlan, type MessagePlan } from '../cosi/spec/proto-object.ts';
import { specMessages } from '../model/spec-codecs.ts';
import { StateError } from '../cosi/state/errors.ts';

export type { ApplyConfigRequest, ApplyConfigResponse, ConfirmConfigResponse };

const SERVICE = '/appliance.config.v1alpha1.ConfigService';
export const APPLY_CONFIG_PATH = `${SERVICE}/ApplyConfig`;
export const CONFIRM_CONFIG_PATH = `${SERVICE}/ConfirmConfig`;

type Obj = Record<string, unknown>;
const plans = new Map<string, MessagePlan>();
const plan = (name: string) => {
  let p = plans.get(name);
  if (!p) { p = messagePlan(specMessages(), name); plans.set(name, p); }
  return p;
};

export interface MessageCodec<T> { encode(m: T): Uint8Array; decode(b: Uint8Array): T }

/** decode throws invalid-argument for bytes that are not the message (a client's mistake, not ours). */
function codec<T>(name: string): MessageCodec<T> {
  return {
    encode: (m) => plan(name).encode(m as Obj),
    decode(b) {
      try { return plan(name).decode(b) as T; } catch (e) {
        throw new StateError('invalid-argument', `the request is not a ${name.replace(/^.*\./, '')}: `
          + `${(e as Error).message}`, name, { cause: e });
      }
    },
  };
}

export const APPLY_REQUEST = codec<ApplyConfigRequest>(MESSAGES.ApplyConfigRequest);
export const APPLY_RESPONSE = codec<ApplyConfigResponse>(MESSAGES.ApplyConfigResponse);
export const CONFIRM_REQUEST = codec<Record<string, never>>(MESSAGES.ConfirmConfigRequest);
export const CONFIRM_RESPONSE = codec<ConfirmConfigResponse>(MESSAGES.ConfirmConfigResponse);
