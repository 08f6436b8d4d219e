// machine-service-wire: appliance.runtime.v1alpha1.MachineService on the wire
// (proto/appliance/runtime/v1alpha1/machine_service.proto), shared by the engine and cosictl.
import {
  MESSAGES, type MachineMount, type MachineProcess, type MachineSocket, type MountsResponse, type MachineOverview,
  type ProcessesResponse, type RestartPluginRequest, type RestartPluginResponse, type SocketsResponse,
} from '../../proto/gen/spec-types.ts';
import { serviceCodec } from './service-codec.ts';

export type {
  MachineMount, MachineOverview, MachineProcess, MachineSocket, MountsResponse, ProcessesResponse, RestartPluginRequest,
  RestartPluginResponse, SocketsResponse,
};

const SERVICE = '/appliance.runtime.v1alpha1.MachineService';
export const OVERVIEW_PATH = `${SERVICE}/Overview`;
export const PROCESSES_PATH = `${SERVICE}/Processes`;
export const MOUNTS_PATH = `${SERVICE}/Mounts`;
export const SOCKETS_PATH = `${SERVICE}/Sockets`;
export const RESTART_PLUGIN_PATH = `${SERVICE}/RestartPlugin`;

type Empty = Record<string, never>;
export const OVERVIEW_REQUEST = serviceCodec<Empty>(MESSAGES.OverviewRequest);
export const OVERVIEW = serviceCodec<MachineOverview>(MESSAGES.MachineOverview);
export const PROCESSES_REQUEST = serviceCodec<Empty>(MESSAGES.ProcessesRequest);
export const PROCESSES_RESPONSE = serviceCodec<ProcessesResponse>(MESSAGES.ProcessesResponse);
export const MOUNTS_REQUEST = serviceCodec<Empty>(MESSAGES.MountsRequest);
export const MOUNTS_RESPONSE = serviceCodec<MountsResponse>(MESSAGES.MountsResponse);
export const SOCKETS_REQUEST = serviceCodec<Empty>(MESSAGES.SocketsRequest);
export const SOCKETS_RESPONSE = serviceCodec<SocketsResponse>(MESSAGES.SocketsResponse);
export const RESTART_PLUGIN_REQUEST = serviceCodec<RestartPluginRequest>(MESSAGES.RestartPluginRequest);
export const RESTART_PLUGIN_RESPONSE = serviceCodec<RestartPluginResponse>(MESSAGES.RestartPluginResponse);
