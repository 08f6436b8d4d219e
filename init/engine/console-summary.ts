// console-summary: one line on the console whenever what a person at the console wants
// to know changes: the hostname, the addresses (loopback and IPv6 link-local aside), and
// where the config stands. Written after a quiet moment, so a burst of changes (DHCP
// bringing up a link, a config applying) gives one line, not ten.
import type { MemoryState } from '../../cosi/state/memory-state.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import { type ConfigStatusSpec } from '../../machinery/model/runtime-types.ts';
import { type ApiCertificateStatusSpec } from '../../machinery/model/security-types.ts';
import {
  API_CERTIFICATE_STATUS_TYPE, CONFIG_STATUS_TYPE, HOSTNAME_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, NETWORK_NS, RUNTIME_NS,
  SECURITY_NS,
} from '../../proto/gen/resource-types.ts';
import { API_ID, CONFIG_STATUS_ID } from '../../machinery/model/singleton-ids.ts';

/** How long the kinds must be quiet before the line is written. */
const QUIET_MS = 500;

interface LinkView { addresses?: string[] }
interface HostnameView { fqdn?: string; hostname?: string }

/** The summary line of the state now. */
export function summaryLine(state: MemoryState): string {
  const host = state.listSync({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_STATUS_TYPE })[0]?.spec as
    HostnameView | undefined;
  const addresses = state.listSync({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE })
    .filter((l) => l.metadata.id !== 'lo')
    .flatMap((l) => ((l.spec as LinkView).addresses ?? []).filter((a) => !/^fe[89ab]/i.test(a))
      .map((a) => `${a} (${l.metadata.id})`));
  const config = state.findSync({ namespace: RUNTIME_NS, type: CONFIG_STATUS_TYPE, id: CONFIG_STATUS_ID })
    ?.spec as ConfigStatusSpec | undefined;
  const api = state.findSync({ namespace: SECURITY_NS, type: API_CERTIFICATE_STATUS_TYPE, id: API_ID })
    ?.spec as ApiCertificateStatusSpec | undefined;
  const configPart = !config || config.state === 'maintenance' ? 'no config yet'
    : `config ${config.state}${config.source ? ` from ${config.source}` : ''}`;
  return `machine: ${host?.fqdn || host?.hostname || '(no hostname)'}; `
    + `${addresses.length ? addresses.join(', ') : 'no address'}; ${configPart}; API ${api?.mode ?? 'starting'}`;
}

/**
 * Writes the summary line to `print` at start and after every change of it: a controller of the engine's
 * (engine-controllers.ts) on the kinds the line is made of.
 */
export function consoleSummary(state: MemoryState, print: (line: string) => void, owner: string): Controller {
  let last = '';
  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const line = summaryLine(state);
      if (line !== last) {
        last = line;
        print(line);
      }
    }, QUIET_MS);
  };
  const kinds = [
    [NETWORK_NS, HOSTNAME_SPEC_STATUS_TYPE], [NETWORK_NS, LINK_STATUS_TYPE], [RUNTIME_NS, CONFIG_STATUS_TYPE],
    [SECURITY_NS, API_CERTIFICATE_STATUS_TYPE],
  ] as const;
  return {
    name: 'console-summary', owner,
    inputs: () => kinds.map(([namespace, type]) => ({ namespace, type, kind: 'weak' as const })),
    outputs: () => [],
    async run(ctx) {
      try {
        while (await ctx.next()) changed();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
