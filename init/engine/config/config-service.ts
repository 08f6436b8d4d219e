// config-service: serves appliance.config.v1alpha1.ConfigService (ApplyConfig,
// ConfirmConfig) over the machine config, next to cosi.resource.State on the users' port.
import { CONFIG_RPC } from '../../../machinery/model/service-wire.ts';
import type { CallContext, Method } from '../../../cosi/remote/grpc/server.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import type { MachineConfig } from './machine-config.ts';

/** Longest try: a day (a forgotten try must still end). */
const MAX_TRY_SECONDS = 86_400;

/**
 * `denied(ctx)`: for the caller of a call, why it may not write a type (its role), or undefined;
 * none: anything (tests of the service alone).
 */
export function configServiceMethods(
  config: MachineConfig, denied?: (ctx: CallContext) => ((type: string) => string | undefined),
): Map<string, Method> {
  return new Map<string, Method>([
    [CONFIG_RPC.applyConfig.path, {
      kind: 'unary',
      async handle(request, ctx) {
        const req = CONFIG_RPC.applyConfig.request.decode(request);
        if (req.trySeconds > MAX_TRY_SECONDS) {
          throw new StateError('invalid-argument', `try_seconds: at most ${MAX_TRY_SECONDS}, got ${req.trySeconds}`);
        }
        if (req.trySeconds && req.dryRun) throw new StateError('invalid-argument', 'a dry run cannot be a try');
        const r = await config.apply({
          bytes: req.config, mode: req.mode === 'replace' ? 'replace' : 'merge', dryRun: req.dryRun,
          trySeconds: req.trySeconds, source: 'api', ...(req.sourceName ? { sourceName: req.sourceName } : {}),
          ...(req.files?.length ? { files: req.files } : {}),
          ...(denied ? { denied: denied(ctx) } : {}),
        });
        return CONFIG_RPC.applyConfig.response.encode({
          changes: r.changes, persistedTo: r.persistedTo, persistProblem: r.persistProblem,
          needsReboot: r.needsReboot, ignored: r.ignored, tryUntil: r.tryUntil ?? '',
        });
      },
    }],
    [CONFIG_RPC.confirmConfig.path, {
      kind: 'unary',
      async handle(request) {
        CONFIG_RPC.confirmConfig.request.decode(request);
        return CONFIG_RPC.confirmConfig.response.encode(await config.confirm());
      },
    }],
  ]);
}
