// ip-subnet: whether an address is inside a network, IPv4 or IPv6, through Node's own
// prefix matching (net.BlockList) rather than bit arithmetic of our own.
import { BlockList, isIP } from 'node:net';

/** True when `ip` is inside network/prefix (same family); false for anything that is not an address. */
export function inSubnet(ip: string, network: string, prefix: number): boolean {
  const family = isIP(ip);
  if (!family || family !== isIP(network)) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return list.check(ip, type);
}
