// address-spec: AddressSpec -> the address on its link (the link is brought up too,
// an address on a down link serves nobody, unless a LinkSpec holds it down) -> AddressStatus.
import { isIP } from 'node:net';
import type { Controller } from '../../init/cosi/controller/contract.ts';
import type { Rtnl } from './rtnetlink/client.ts';
import { specApplier } from './spec-applier.ts';
import { ADDRESS_SPEC_TYPE, ADDRESS_STATUS_TYPE, type AddressSpecSpec } from './types.ts';

/** "10.0.2.15/24" -> parts, or an error that names the input. */
export function parseCidr(text: string): { ip: string; prefix: number; family: 4 | 6 } {
  const [ip = '', p = '', ...rest] = text.split('/');
  const family = isIP(ip);
  const prefix = Number(p);
  if (rest.length || !family || !/^\d+$/.test(p) || prefix > (family === 4 ? 32 : 128)) throw new Error(`invalid address "${text}" (expected IP/prefix, e.g. 192.0.2.10/24)`);
  return { ip, prefix, family: family as 4 | 6 };
}

export function addressSpecController(rtnl: () => Rtnl): Controller {
  return specApplier<AddressSpecSpec>({
    name: 'address-spec',
    specType: ADDRESS_SPEC_TYPE,
    statusType: ADDRESS_STATUS_TYPE,
    key: (s) => `${s.address} dev ${s.link}`,
    link: (s) => s.link,
    apply(s, link, heldDown) {
      const { ip, prefix } = parseCidr(s.address);
      if (!link.up && !heldDown) rtnl().setLink(link.index, { up: true });
      rtnl().address('add', link.index, ip, prefix);
    },
    remove(key, links) {
      const [cidr = '', , name = ''] = key.split(' ');
      const link = links.get(name);
      if (!link) return; // the link went away and took its addresses along
      const { ip, prefix } = parseCidr(cidr);
      try { rtnl().address('del', link.index, ip, prefix); } catch (e) { if ((e as { code?: string }).code !== 'EADDRNOTAVAIL') throw e; }
    },
  });
}
