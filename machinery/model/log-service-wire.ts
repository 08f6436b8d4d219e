// log-service-wire: appliance.runtime.v1alpha1.LogService on the wire
// (proto/appliance/runtime/v1alpha1/log_service.proto), shared by the engine and cosictl.
import {
  MESSAGES, type LogLine, type LogSourcesResponse, type LogsRequest,
} from '../../proto/gen/spec-types.ts';
import { serviceCodec } from './service-codec.ts';

export type { LogLine, LogSourcesResponse, LogsRequest };

const SERVICE = '/appliance.runtime.v1alpha1.LogService';
export const LOGS_PATH = `${SERVICE}/Logs`;
export const LOG_SOURCES_PATH = `${SERVICE}/LogSources`;

export const LOGS_REQUEST = serviceCodec<LogsRequest>(MESSAGES.LogsRequest);
export const LOG_LINE = serviceCodec<LogLine>(MESSAGES.LogLine);
export const LOG_SOURCES_REQUEST = serviceCodec<Record<string, never>>(MESSAGES.LogSourcesRequest);
export const LOG_SOURCES_RESPONSE = serviceCodec<LogSourcesResponse>(MESSAGES.LogSourcesResponse);
