// network-config-common: what network-config versions 1 and 2 share: destinations and netmasks,
// routes and routing rules read from a mapping (with each key accounted for), the empty network.
import { isIP } from 'node:net';
import type { PlatformNetworkSpec, PlatformRoute, PlatformRule } from '../../../proto/gen/spec-types.ts';
import { uintOf, type KeyAccount, type KeyReader } from './key-reader.ts';

/** How ignored network-config keys are introduced in ConfigStatus. */
export const PREFIX = 'network-config';

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

const DEFAULTS = new Set(['default', '0.0.0.0/0', '::/0', '0.0.0.0', '::']);

/**
 * A destination as written (CIDR, an address alone, or an address with a separate netmask) -> CIDR; 'default' and
 * the all-zero networks -> undefined (the default route of the gateway's family); an Error names what is wrong.
 */
export function destinationOf(to: unknown, netmask?: unknown): string | undefined | Error {
  if (to === undefined || to === null) return undefined;
  if (typeof to !== 'string') return new Error(`destination ${JSON.stringify(to)} is not a network`);
  const text = to.trim();
  if (DEFAULTS.has(text)) return undefined;
  const [ip = '', given] = text.split('/');
  const family = isIP(ip);
  if (!family) return new Error(`destination "${text}" is not a network (IP/prefix)`);
  const prefix = given !== undefined ? Number(given) : netmask !== undefined ? prefixOf(netmask)
    : family === 4 ? 32 : 128;
  if (prefix === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
    return new Error(`destination "${text}"${netmask !== undefined ? ` with netmask ${String(netmask)}` : ''} has `
      + 'no valid prefix');
  }
  return prefix === 0 ? undefined : `${ip}/${prefix}`;
}

export { uintOf };

const ROUTE_TYPES: Record<string, PlatformRoute['type']> = {
  unicast: 'unicast', blackhole: 'blackhole', unreachable: 'unreachable', prohibit: 'prohibit',
};

/**
 * One route mapping, read with the names of its format (`names`: which key is the destination, the gateway, ...):
 * a PlatformRoute, or undefined when it cannot be applied (then listed as ignored with why, at its path).
 */
export function readRoute(
  r: KeyReader,
  names: { to: string[]; via: string; netmask?: string; from?: string; onLink?: string; type?: string },
): PlatformRoute | undefined {
  const toKey = names.to.find((k) => r.has(k));
  const to = destinationOf(toKey ? r.take(toKey) : undefined, names.netmask ? r.take(names.netmask) : undefined);
  if (to instanceof Error) {
    r.ignoreAt(r.path, `${to.message}: the route is left out`);
    return undefined;
  }
  const via = r.take(names.via);
  if (via !== undefined && (typeof via !== 'string' || !isIP(via))) {
    r.ignoreAt(r.path, `gateway ${JSON.stringify(via)} is not an IP address: the route is left out`);
    return undefined;
  }
  const metric = r.uint('metric');
  const table = r.take('table');
  const tableId = uintOf(table);
  if (table !== undefined && (tableId === undefined || tableId === 0 || tableId === 255)) {
    r.ignoreAt(r.path, `table ${JSON.stringify(table)} is not a table number (1-4294967295, not 255): `
      + 'the route is left out');
    return undefined;
  }
  const type = names.type ? r.take(names.type) : undefined;
  if (type !== undefined && (typeof type !== 'string' || !ROUTE_TYPES[type])) {
    r.ignoreAt(r.path, `type ${JSON.stringify(type)} is not supported (unicast, blackhole, unreachable, prohibit): `
      + 'the route is left out');
    return undefined;
  }
  const kind = typeof type === 'string' ? ROUTE_TYPES[type] : undefined;
  if (!via && (kind === undefined || kind === 'unicast') && to === undefined) {
    r.ignoreAt(r.path, 'a default route needs a gateway: the route is left out');
    return undefined;
  }
  const onLink = names.onLink ? r.bool(names.onLink) : undefined;
  const from = names.from ? r.take(names.from) : undefined;
  if (from !== undefined && (typeof from !== 'string' || !isIP(from))) {
    r.ignoreAt(r.path, `from ${JSON.stringify(from)} is not an IP address: the route is left out`);
    return undefined;
  }
  const mtu = r.uint('mtu');
  return {
    ...(to ? { to } : {}), via: typeof via === 'string' ? via : '',
    ...(metric !== undefined ? { metric } : {}), ...(tableId !== undefined ? { table: tableId } : {}),
    ...(onLink === true ? { onLink: true } : {}), ...(typeof from === 'string' ? { from } : {}),
    ...(mtu !== undefined ? { mtu } : {}), ...(kind && kind !== 'unicast' ? { type: kind } : {}),
  };
}

/** One routing-policy mapping (netplan's names) -> a PlatformRule, or undefined (listed as ignored). */
export function readRule(r: KeyReader): PlatformRule | undefined {
  const net = (key: string) => {
    const v = r.take(key);
    if (v === undefined) return undefined;
    const d = destinationOf(v);
    return d instanceof Error ? d : d ?? (typeof v === 'string' && v.includes(':') ? '::/0' : '0.0.0.0/0');
  };
  const from = net('from');
  const to = net('to');
  const table = uintOf(r.take('table'));
  for (const x of [from, to]) {
    if (x instanceof Error) {
      r.ignoreAt(r.path, `${x.message}: the rule is left out`);
      return undefined;
    }
  }
  if (table === undefined || table === 0 || table === 255) {
    r.ignoreAt(r.path, 'a rule needs a table number (1-4294967295, not 255): the rule is left out');
    return undefined;
  }
  const priority = r.uint('priority');
  const mark = r.uint('mark');
  const tos = r.uint('type-of-service');
  return {
    ...(from ? { from: from as string } : {}), ...(to ? { to: to as string } : {}), table,
    ...(priority !== undefined ? { priority } : {}), ...(mark !== undefined ? { mark } : {}),
    ...(tos !== undefined ? { tos } : {}),
  };
}

/** An empty network with the account its translation fills. */
export function emptyNetwork(): { network: PlatformNetworkSpec & Required<Pick<PlatformNetworkSpec,
  'interfaces' | 'nameservers' | 'searchDomains' | 'ignored' | 'rules'>>; account: KeyAccount } {
  const ignored: string[] = [];
  return {
    network: { interfaces: [], nameservers: [], searchDomains: [], hostname: '', timeServers: [], ignored, rules: [] },
    account: { applied: [], ignored },
  };
}

