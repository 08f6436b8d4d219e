// extension-service: serves appliance.extension.v1alpha1.ExtensionService (Push) over ExtensionPushes, next to
// cosi.resource.State on the users' port; the role table (model/access.ts) lets admins only call it.
import type { Method } from '../../../cosi/remote/grpc/server.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import { EXTENSION_RPC, UPLOAD_CHUNK_MAX } from '../../../machinery/model/service-wire.ts';
import type { ExtensionPushes } from './extension-push.ts';

export function extensionServiceMethods(pushes: ExtensionPushes): Map<string, Method> {
  return new Map<string, Method>([[EXTENSION_RPC.push.path, {
    kind: 'unary',
    async handle(request) {
      const req = EXTENSION_RPC.push.request.decode(request);
      if (!req.extension) throw new StateError('invalid-argument', 'extension: the extension\'s name is required');
      if (req.data.length > UPLOAD_CHUNK_MAX) {
        throw new StateError('invalid-argument', `data: ${req.data.length} bytes; at most ${UPLOAD_CHUNK_MAX} a call`);
      }
      const r = await pushes.push({
        extension: req.extension, sha256: req.sha256, size: Number(req.size), offset: Number(req.offset),
        data: Buffer.from(req.data), persist: req.persist, signature: Buffer.from(req.signature),
      });
      return EXTENSION_RPC.push.response.encode(r);
    },
  }]]);
}
