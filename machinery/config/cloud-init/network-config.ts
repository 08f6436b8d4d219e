// network-config: cloud-init's network configuration, version 1 and version 2
// (netplan), -> the platform's network (PlatformNetworkSpec). Ethernets are matched by
// name or MAC; dhcp4, static addresses, gateway4, routes (incl. `to: default`),
// nameservers and MTU are translated. Everything else (dhcp6, bonds, bridges, VLANs,
// set-name, Wi-Fi, ...) is listed as ignored until it is supported.
import type { PlatformInterface, PlatformNetworkSpec, PlatformRoute } from '../../../proto/gen/spec-types.ts';
import { isMap } from '../safe-yaml.ts';

export type NetworkTranslation = { ok: true; network: PlatformNetworkSpec } | { ok: false; message: string };

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
const strs = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');

/** 255.255.255.0 -> 24; a prefix length given as a number or string passes through. */
export function prefixOf(netmask: unknown): number | undefined {
  if (typeof netmask === 'number') return netmask;
  if (typeof netmask !== 'string') return undefined;
  if (/^\d{1,3}$/.test(netmask)) return Number(netmask);
  const parts = netmask.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !(p >= 0 && p <= 255))) return undefined;
  const bits = parts.map((p) => p.toString(2).padStart(8, '0')).join('');
  return /^1*0*$/.test(bits) ? bits.indexOf('0') === -1 ? 32 : bits.indexOf('0') : undefined;
}

const isDefault = (to: unknown) => to === 'default' || to === '0.0.0.0/0' || to === '::/0';
const route = (to: unknown, via: unknown, metric: unknown): PlatformRoute | undefined => {
  if (typeof via !== 'string') return undefined;
  return {
    ...(isDefault(to) || to === undefined ? {} : { to: String(to) }), via,
    ...(typeof metric === 'number' ? { metric } : {}),
  };
};

/** The document may be the config itself or wrapped in `network:`. */
export function translateNetworkConfig(doc: unknown): NetworkTranslation {
  const cfg = isMap(doc) && isMap(doc.network) ? doc.network : doc;
  if (!isMap(cfg)) return { ok: false, message: 'network-config: must be a mapping' };
  if (cfg.version === 2 || cfg.version === '2') return { ok: true, network: fromV2(cfg) };
  if (cfg.version === 1 || cfg.version === '1') return { ok: true, network: fromV1(cfg) };
  return { ok: false, message: `network-config: version ${JSON.stringify(cfg.version)} is not 1 or 2` };
}

function fromV2(cfg: Record<string, unknown>): PlatformNetworkSpec {
  const ignored: string[] = [];
  const nameservers: string[] = [];
  const search: string[] = [];
  const interfaces: PlatformInterface[] = [];
  for (const k of Object.keys(cfg)) {
    if (!['version', 'ethernets', 'renderer'].includes(k)) ignored.push(`network-config ${k}: not supported yet`);
  }
  for (const [id, e] of Object.entries(isMap(cfg.ethernets) ? cfg.ethernets : {})) {
    if (!isMap(e)) {
      ignored.push(`network-config ethernets.${id}: must be a mapping`);
      continue;
    }
    const match = isMap(e.match) ? e.match : {};
    const mac = typeof match.macaddress === 'string' ? match.macaddress.toLowerCase() : '';
    const name = typeof match.name === 'string' ? match.name : mac ? '' : id;
    if (typeof match.name === 'string' && /[*?]/.test(match.name)) {
      ignored.push(`network-config ethernets.${id}.match.name: glob patterns are not supported yet`);
    }
    const routes: PlatformRoute[] = [];
    if (typeof e.gateway4 === 'string') routes.push({ via: e.gateway4 });
    for (const r of list(e.routes)) {
      const x = isMap(r) ? route(r.to, r.via, r.metric) : undefined;
      if (x) routes.push(x);
      else ignored.push(`network-config ethernets.${id}.routes: ${JSON.stringify(r)} has no via`);
    }
    const ns = isMap(e.nameservers) ? e.nameservers : {};
    nameservers.push(...strs(ns.addresses));
    search.push(...strs(ns.search));
    for (const k of Object.keys(e)) {
      if (!['match', 'dhcp4', 'addresses', 'gateway4', 'routes', 'nameservers', 'mtu'].includes(k)) {
        ignored.push(`network-config ethernets.${id}.${k}: not supported yet`);
      }
    }
    interfaces.push({
      name, mac, dhcp4: e.dhcp4 === true || e.dhcp4 === 'true' || e.dhcp4 === 'yes',
      addresses: strs(e.addresses), ...(typeof e.mtu === 'number' ? { mtu: e.mtu } : {}), routes,
    });
  }
  return { interfaces, nameservers, searchDomains: search, hostname: '', timeServers: [], ignored };
}

function fromV1(cfg: Record<string, unknown>): PlatformNetworkSpec {
  const ignored: string[] = [];
  const nameservers: string[] = [];
  const search: string[] = [];
  const interfaces: PlatformInterface[] = [];
  const globalRoutes: PlatformRoute[] = [];
  for (const [i, item] of list(cfg.config).entries()) {
    if (!isMap(item)) {
      ignored.push(`network-config config[${i}]: must be a mapping`);
      continue;
    }
    if (item.type === 'nameserver') {
      nameservers.push(...strs(item.address));
      search.push(...strs(item.search));
      continue;
    }
    if (item.type === 'route') {
      const r = route(item.destination ?? item.network, item.gateway, item.metric);
      if (r) globalRoutes.push(r);
      else ignored.push(`network-config config[${i}]: a route without gateway`);
      continue;
    }
    if (item.type !== 'physical') {
      ignored.push(`network-config config[${i}] (type ${String(item.type)}): not supported yet`);
      continue;
    }
    const iface: PlatformInterface = {
      name: typeof item.name === 'string' ? item.name : '',
      mac: typeof item.mac_address === 'string' ? item.mac_address.toLowerCase() : '',
      dhcp4: false, addresses: [], routes: [], ...(typeof item.mtu === 'number' ? { mtu: item.mtu } : {}),
    };
    for (const [j, s] of list(item.subnets).entries()) {
      const where = `network-config config[${i}].subnets[${j}]`;
      if (!isMap(s)) {
        ignored.push(`${where}: must be a mapping`);
        continue;
      }
      if (s.type === 'dhcp' || s.type === 'dhcp4') {
        iface.dhcp4 = true;
        continue;
      }
      if (s.type !== 'static') {
        ignored.push(`${where} (type ${String(s.type)}): not supported yet`);
        continue;
      }
      if (typeof s.address !== 'string') {
        ignored.push(`${where}: static without address`);
        continue;
      }
      const prefix = s.address.includes('/') ? undefined : prefixOf(s.netmask) ?? 24;
      iface.addresses!.push(prefix === undefined ? s.address : `${s.address}/${prefix}`);
      if (typeof s.gateway === 'string') iface.routes!.push({ via: s.gateway });
      for (const r of list(s.routes)) {
        const x = isMap(r) ? route(r.network === undefined ? undefined
          : `${String(r.network)}/${prefixOf(r.netmask) ?? 32}`, r.gateway, r.metric) : undefined;
        if (x) iface.routes!.push(x);
      }
      nameservers.push(...strs(s.dns_nameservers));
      search.push(...strs(s.dns_search));
    }
    interfaces.push(iface);
  }
  // A global route goes on the first interface with a static address (v1 does not say which link).
  const onto = interfaces.find((f) => f.addresses!.length) ?? interfaces[0];
  if (onto) onto.routes!.push(...globalRoutes);
  else if (globalRoutes.length) ignored.push('network-config: routes with no interface to put them on');
  return { interfaces, nameservers, searchDomains: search, hostname: '', timeServers: [], ignored };
}
