// power-requests: a PowerRequest (reboot, power off) handed to PID 1, which stops the machine gracefully
// (shutdown-hold.ts waits for the clients that hold it). Once each: a request stays until the machine stops.
import type { Controller } from '../../cosi/controller/contract.ts';
import { requestController } from '../../cosi/controller/request-controller.ts';
import type { Logger } from '../../machinery/log.ts';
import type { PowerRequestSpec } from '../../proto/gen/spec-types.ts';
import { CONFIG_NS, POWER_REQUEST_TYPE } from '../../proto/gen/resource-types.ts';
import type { HoldOptions } from './shutdown-hold.ts';

export type OnPowerRequest = (action: PowerRequestSpec['action'], id: string, hold: HoldOptions) => void;

export function powerRequests(o: { owner: string; log: Logger; onPowerRequest?: OnPowerRequest }): Controller {
  return requestController<PowerRequestSpec, never>({
    name: 'power-requests', owner: o.owner, oneAtATime: false,
    request: { namespace: CONFIG_NS, type: POWER_REQUEST_TYPE },
    handle: async (id, spec) => {
      o.log.info(`power request "${id}": ${spec.action}${spec.force ? ' (forced)' : ''}`);
      o.onPowerRequest?.(spec.action, id, {
        ...(spec.graceSeconds ? { graceMs: spec.graceSeconds * 1000 } : {}), ...(spec.force ? { force: true } : {}),
      });
    },
  });
}
