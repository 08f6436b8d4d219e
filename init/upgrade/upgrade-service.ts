// upgrade-service: serves appliance.upgrade.v1alpha1.UpgradeService (Upload) over the upgrader, next to
// cosi.resource.State on the users' port; the role table (model/access.ts) lets admins only call it.
import type { Method } from '../../cosi/remote/grpc/server.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { UPGRADE_RPC, UPLOAD_CHUNK_MAX } from '../../machinery/model/service-wire.ts';
import type { Upgrader } from './upgrader.ts';

export function upgradeServiceMethods(upgrader: Upgrader): Map<string, Method> {
  return new Map<string, Method>([[UPGRADE_RPC.upload.path, {
    kind: 'unary',
    async handle(request) {
      const req = UPGRADE_RPC.upload.request.decode(request);
      if (!req.upgradeId) throw new StateError('invalid-argument', 'upgrade_id: the UpgradeRequest\'s id is required');
      if (req.data.length > UPLOAD_CHUNK_MAX) {
        throw new StateError('invalid-argument', `data: ${req.data.length} bytes; at most ${UPLOAD_CHUNK_MAX} a call`);
      }
      const r = await upgrader.upload(req.upgradeId, req.offset, Buffer.from(req.data));
      return UPGRADE_RPC.upload.response.encode(r);
    },
  }]]);
}
