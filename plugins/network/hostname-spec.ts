// hostname-spec: MergedHostnameSpec "hostname" -> sethostname(2)/setdomainname(2),
// /etc/hostname and /etc/hosts -> HostnameSpecStatus. The names the machine had before
// the first change are kept in the status and put back when no HostnameSpec remains.
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname as kernelHostname } from 'node:os';
import { join } from 'node:path';
import type { Native } from '../../native/index.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { type HostnameSpecSpec, type HostnameSpecStatusSpec } from './types.ts';
import { HOSTNAME_SPEC_STATUS_TYPE, MERGED_HOSTNAME_SPEC_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

export function hostsFile(fqdn: string, short: string): string {
  return '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n'
    + `127.0.1.1\t${fqdn === short ? short : `${fqdn} ${short}`}\n`;
}

/** What hostname-spec changes: the kernel's names and the files that repeat them. */
export interface HostnameKernel {
  names(): { hostname: string; domainname: string };
  set(hostname: string, domainname: string): void;
}

/** The kernel's UTS names (the domain name from /proc/sys/kernel/domainname) and /etc. */
export function nativeHostnameKernel(n: () => Native, etc = '/etc', readDomain: () => string): HostnameKernel {
  return {
    names: () => ({ hostname: kernelHostname(), domainname: readDomain() }),
    set(hostname, domainname) {
      n().sethostname(hostname);
      n().setdomainname(domainname);
      mkdirSync(etc, { recursive: true });
      const fqdn = domainname && domainname !== '(none)' ? `${hostname}.${domainname}` : hostname;
      writeFileSync(join(etc, 'hostname'), `${hostname}\n`);
      writeFileSync(join(etc, 'hosts'), hostsFile(fqdn, hostname));
    },
  };
}

export function hostnameSpecController(kernel: HostnameKernel) {
  const names = (s: HostnameSpecSpec) => {
    const [short = '', ...rest] = s.hostname.split('.');
    const domain = s.domainname ?? rest.join('.');
    return { hostname: short, domainname: domain, fqdn: domain ? `${short}.${domain}` : short, layer: layerOf(s) };
  };
  return specController<HostnameSpecSpec, HostnameSpecStatusSpec, null>({
    name: 'hostname-spec', namespace: NETWORK_NS,
    specType: MERGED_HOSTNAME_SPEC_TYPE, statusType: HOSTNAME_SPEC_STATUS_TYPE,
    observe: () => null,
    apply(_id, s, prev) {
      const original = prev?.original ?? kernel.names();
      const n = names(s);
      kernel.set(n.hostname, n.domainname);
      return { ...n, state: 'applied', original };
    },
    failed: (_id, s, prev, error) => ({
      ...names(s), state: 'error', error, ...(prev?.original ? { original: prev.original } : {}),
    }),
    undo(_id, prev) { if (prev.original) kernel.set(prev.original.hostname, prev.original.domainname); },
  });
}
