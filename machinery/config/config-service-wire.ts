// config-service-wire: appliance.config.v1alpha1.ConfigService on the wire
// (proto/appliance/config/v1alpha1/config_service.proto), shared by the engine, which
// serves it, and cosictl. Messages travel through our table codec in their object form.
import type {
  ApplyConfigRequest, ApplyConfigResponse, ConfirmConfigResponse,
} from '../../proto/gen/spec-types.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { serviceCodec as codec } from '../model/service-codec.ts';

export type { ApplyConfigRequest, ApplyConfigResponse, ConfirmConfigResponse };

const SERVICE = '/appliance.config.v1alpha1.ConfigService';
export const APPLY_CONFIG_PATH = `${SERVICE}/ApplyConfig`;
export const CONFIRM_CONFIG_PATH = `${SERVICE}/ConfirmConfig`;

export const APPLY_REQUEST = codec<ApplyConfigRequest>(MESSAGES.ApplyConfigRequest);
export const APPLY_RESPONSE = codec<ApplyConfigResponse>(MESSAGES.ApplyConfigResponse);
export const CONFIRM_REQUEST = codec<Record<string, never>>(MESSAGES.ConfirmConfigRequest);
export const CONFIRM_RESPONSE = codec<ConfirmConfigResponse>(MESSAGES.ConfirmConfigResponse);
