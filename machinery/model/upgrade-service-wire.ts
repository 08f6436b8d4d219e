// upgrade-service-wire: appliance.upgrade.v1alpha1.UpgradeService on the wire
// (proto/appliance/upgrade/v1alpha1/upgrade_service.proto), shared by the engine and cosictl.
import { MESSAGES, type UploadRequest, type UploadResponse } from '../../proto/gen/spec-types.ts';
import { serviceCodec } from './service-codec.ts';

export type { UploadRequest, UploadResponse };

export const UPLOAD_PATH = '/appliance.upgrade.v1alpha1.UpgradeService/Upload';
/** The largest chunk a call carries; the API's request limit leaves room for it. */
export const UPLOAD_CHUNK_MAX = 1 << 20;

export const UPLOAD_REQUEST = serviceCodec<UploadRequest>(MESSAGES.UploadRequest);
export const UPLOAD_RESPONSE = serviceCodec<UploadResponse>(MESSAGES.UploadResponse);
