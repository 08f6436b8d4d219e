// hostname: HostnameSpecs (one per source) -> the winning layer -> sethostname(2),
// /etc/hostname and /etc/hosts -> HostnameStatus "hostname".
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Controller } from '../../init/cosi/controller/contract.ts';
import type { Native } from '../../native/index.ts';
import { winningSpec } from './layers.ts';
import { HOSTNAME_SPEC_TYPE, HOSTNAME_STATUS_TYPE, NETWORK_NS, type HostnameSpecSpec, type HostnameStatusSpec } from './types.ts';

export function hostsFile(fqdn: string, short: string): string {
  return `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t${fqdn === short ? short : `${fqdn} ${short}`}\n`;
}

export function hostnameController(n: () => Native, etc = '/etc'): Controller {
  return {
    name: 'hostname',
    inputs: () => [{ namespace: NETWORK_NS, type: HOSTNAME_SPEC_TYPE, kind: 'weak' }],
    outputs: () => [{ type: HOSTNAME_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      while (await ctx.next()) {
        const win = await winningSpec<HostnameSpecSpec>(ctx.state, HOSTNAME_SPEC_TYPE);
        if (!win) continue; // keep whatever the machine has
        const [short = '', ...rest] = win.spec.hostname.split('.');
        const domain = win.spec.domainname ?? rest.join('.');
        const fqdn = domain ? `${short}.${domain}` : short;
        let status: HostnameStatusSpec;
        try {
          n().sethostname(short);
          n().setdomainname(domain);
          mkdirSync(etc, { recursive: true });
          writeFileSync(join(etc, 'hostname'), `${short}\n`);
          writeFileSync(join(etc, 'hosts'), hostsFile(fqdn, short));
          status = { hostname: short, domainname: domain, fqdn, source: win.id };
        } catch (e) {
          status = { hostname: short, domainname: domain, fqdn, source: win.id, error: (e as Error).message };
        }
        await ctx.state.put({ namespace: NETWORK_NS, type: HOSTNAME_STATUS_TYPE, id: 'hostname' }, status);
      }
    },
  };
}
