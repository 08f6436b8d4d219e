// platform: where the machine config comes from (kernel command line, QEMU fw_cfg,
// NoCloud, OpenStack, EC2, GCE) and what the platform says about the machine and its
// network. The engine applies the user data found (init/engine/platform-config.ts).
import { native } from '../../native/index.ts';
import { inHostMode, type Plugin } from '../../machinery/model/plugin.ts';
import { configSourceController, lookForConfig } from './config-source.ts';
import { machineEnv } from './machine-env.ts';
import { platformNetworkController } from './platform-network.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';
import { PLATFORM_NS } from '../../proto/gen/resource-types.ts';

export const platformPlugin: Plugin = {
  name: 'platform',
  // What its sources here hold, read by PID 1 first; it starts first when one may still come, else with the rest.
  lookForConfig: ({ params }) => lookForConfig(machineEnv(native, { ...params }, '')),
  description: 'Finds the machine config (kernel command line, fw_cfg, NoCloud, OpenStack, EC2, GCE), the '
    + 'platform metadata, and the network the platform describes (platform layer).',
  namespaces: () => ({ [PLATFORM_NS]: 'Where the machine config comes from, and what the platform says.' }),
  types: () => definitionsServedBy('platform'),
  capabilities: ['CAP_SYS_ADMIN'], // mount(2) of seed volumes (cidata, config-2), read-only
  syscalls: ['mount', 'umount2'], // in its own mount namespace: nobody else sees a seed mounted
  controllers: () => [
    // On a host (`serve`) no probing: nothing mounted, no metadata service asked.
    ...(inHostMode() ? [] : [configSourceController({ env: (params, mac) => machineEnv(native, params, mac) })]),
    platformNetworkController(),
  ],
};
