// link-spec: MergedLinkSpec (id = link name) -> the link through rtnetlink -> LinkSpecStatus.
// The only controller that creates, deletes, enslaves or brings links up or down.
//   virtual links  a spec with a kind (bond, bridge, vlan) creates the link (once the kernel
//                  can: link-modules.ts asks for the module) and deletes it when no layer
//                  declares it any more; its kind's settings are written when they change
//   ports          `master` makes the link a port of a bond or bridge (a bond port is taken
//                  down first: the bonding driver takes only links that are down, and brings
//                  them up itself); released when no layer says so
//   accept_ra      written to /proc/sys/net/ipv6/conf/<link>/ (with autoconf) before the link goes
//                  up, so its first router solicitation already follows it; left as it is when
//                  the spec goes
//   up, MTU        as before: the MTU the link had before the first change is kept in the
//                  status and written back once no layer sets one; a link is left up when its
//                  spec goes (taking it down could cut the machine off)
// Woken by LinkStatus and the kernel modules' statuses, so a link changed behind our back is
// put back and a spec waiting for a module or a parent goes on when it arrives.
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { acceptRaSettings, procIpv6Conf, type Ipv6Conf } from './ipv6-conf.ts';
import { linksByName } from './link-status.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import { bondData, bridgeData, KIND_MODULES, vlanData } from './rtnetlink/link-kinds.ts';
import { type LinkSpecSpec, type LinkSpecStatusSpec, type LinkStatusSpec } from './types.ts';
import {
  KERNEL_MODULE_SPEC_STATUS_TYPE, LINK_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, MERGED_LINK_SPEC_TYPE, NETWORK_NS,
  SYSTEM_NS,
} from '../../proto/gen/resource-types.ts';

type Links = Map<string, LinkStatusSpec>;

function explain(e: unknown, mtu: number | undefined): string {
  if (isErrno(e, 'EINVAL') && mtu !== undefined) {
    return `the kernel refused MTU ${mtu} (EINVAL: outside what the link allows)`;
  }
  return (e as Error).message;
}

/** A spec's kind settings (a bond's primary as the index it has now), compared with what was written last. */
const settingsOf = (s: LinkSpecSpec, links: Links) => JSON.stringify(s.kind === 'vlan' ? s.vlan ?? {}
  : s.kind === 'bond' ? { ...s.bond, primaryIndex: s.bond?.primary ? links.get(s.bond.primary)?.index : undefined }
    : s.kind === 'bridge' ? s.bridge ?? {} : {});

/** Why a link the kernel has is not the virtual link a spec declares, or undefined when it is. */
function mismatch(s: LinkSpecSpec, link: LinkStatusSpec): string | undefined {
  if (link.kind !== s.kind) return `it is a ${link.kind ?? `${link.type} (physical)`} link, not a ${s.kind}`;
  if (s.kind === 'vlan' && (link.vlanId !== s.vlan?.id || link.parent !== s.vlan?.parent)) {
    return `it is VLAN ${link.vlanId} on ${link.parent}, not ${s.vlan?.id} on ${s.vlan?.parent}`;
  }
  if (s.kind === 'bond' && link.bondMode !== (s.bond?.mode ?? 'balance-rr')) {
    return `it is a ${link.bondMode} bond, not ${s.bond?.mode ?? 'balance-rr'}`;
  }
  return undefined;
}

export function linkSpecController(rtnl: () => RtnlApi, ipv6: Ipv6Conf = procIpv6Conf) {
  const keepOriginal = (prev: LinkSpecStatusSpec | undefined) => (
    prev?.originalMtu !== undefined ? { originalMtu: prev.originalMtu } : {}
  );
  const kindData = (s: LinkSpecSpec, links: Links, created: boolean): Buffer[] => {
    if (s.kind === 'vlan') return created ? vlanData(s.vlan!.id) : [];
    if (s.kind === 'bond') {
      return bondData(s.bond ?? {}, s.bond?.primary ? links.get(s.bond.primary)?.index : undefined, created);
    }
    if (s.kind === 'bridge') return bridgeData(s.bridge ?? {});
    return [];
  };

  /** Creates the virtual link a spec declares; a status while it cannot yet (a module, a parent), else undefined. */
  const create = (name: string, s: LinkSpecSpec, links: Links): Omit<LinkSpecStatusSpec, 'link' | 'layer'> => {
    if (s.kind === 'vlan' && !s.vlan?.id) return { state: 'error', error: 'a vlan link needs vlan.id and vlan.parent' };
    const parent = s.kind === 'vlan' ? links.get(s.vlan!.parent) : undefined;
    if (s.kind === 'vlan' && !parent) {
      return { state: 'pending', error: `waiting for link "${s.vlan!.parent}", which VLAN ${s.vlan!.id} is on` };
    }
    try {
      rtnl().createLink({
        name, kind: s.kind!, ...(s.mtu !== undefined ? { mtu: s.mtu } : {}),
        ...(parent ? { parent: parent.index } : {}), data: kindData(s, links, true),
      });
    } catch (e) {
      if (isErrno(e, 'EOPNOTSUPP')) {
        return { state: 'pending', error: `the kernel cannot make ${s.kind} links yet: waiting for module `
          + `${KIND_MODULES[s.kind!]} (kernelmodulespecstatus ${KIND_MODULES[s.kind!]})` };
      }
      throw e;
    }
    return { state: 'pending', error: 'created; waiting for the kernel to report it', created: s.kind! };
  };

  /** Makes the link a port of `master`, or releases it from the one link-spec made it a port of. */
  const port = (link: LinkStatusSpec, s: LinkSpecSpec, prev: LinkSpecStatusSpec | undefined, links: Links) => {
    if (s.master) {
      const m = links.get(s.master);
      if (!m) return `waiting for "${s.master}", which it is to be a port of`;
      if (link.master === s.master) return undefined;
      if (m.kind === 'bond' && link.up) rtnl().setLink(link.index, { up: false });
      rtnl().setLink(link.index, { master: m.index });
      return undefined;
    }
    if (prev?.master && link.master === prev.master) rtnl().setLink(link.index, { master: 0 });
    return undefined;
  };

  return specController<LinkSpecSpec, LinkSpecStatusSpec, Links>({
    name: 'link-spec', namespace: NETWORK_NS, specType: MERGED_LINK_SPEC_TYPE, statusType: LINK_SPEC_STATUS_TYPE,
    inputs: [
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
      { namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_STATUS_TYPE, kind: 'weak' },
    ],
    observe: (ctx) => linksByName(ctx.state),
    apply(name, s, prev, links) {
      const created = prev?.created ?? undefined;
      const base = {
        link: name, layer: layerOf(s), ...(s.up !== undefined ? { up: s.up } : {}), ...(created ? { created } : {}),
      };
      const wasPort = prev?.master ? { master: prev.master } : {};
      let link = links.get(name);
      if (link && created && !s.kind && link.kind === created) {
        // No layer declares the virtual link any more (a lower one still says up or MTU): it goes now.
        rtnl().deleteLink(link.index);
        return { link: name, layer: layerOf(s), state: 'pending', error: `deleted: no layer declares it a ${created}` };
      }
      if (link && s.kind && mismatch(s, link)) {
        if (created !== s.kind) {
          return { ...base, ...wasPort, state: 'error', error: `link "${name}" exists and ${mismatch(s, link)}`,
            ...keepOriginal(prev) };
        }
        rtnl().deleteLink(link.index); // ours, made with other settings that cannot change: made again
        link = undefined;
      }
      if (!link) {
        if (!s.kind) {
          return { ...base, state: 'pending', error: `link "${name}" does not exist (yet)`, ...keepOriginal(prev) };
        }
        return { ...base, ...create(name, s, links), ...keepOriginal(prev) };
      }
      const waiting = port(link, s, prev, links);
      const master = s.master && !waiting ? { master: s.master } : {};
      // The MTU before our first change; once no layer sets one, it goes back and is forgotten.
      const originalMtu = prev?.originalMtu ?? (s.mtu !== undefined ? link.mtu : undefined);
      const mtu = s.mtu ?? originalMtu;
      const settings = s.kind ? settingsOf(s, links) : undefined;
      // A VLAN has nothing to change once made (its id and parent are remade): an empty IFLA_INFO_DATA is EINVAL.
      const data = s.kind && settings !== prev?.settings ? kindData(s, links, false) : [];
      const change = {
        ...(s.up !== undefined && link.up !== s.up ? { up: s.up } : {}),
        ...(mtu !== undefined && link.mtu !== mtu ? { mtu } : {}),
        ...(s.kind && data.length ? { kind: { kind: s.kind, data } } : {}),
      };
      try {
        for (const [key, value] of s.acceptRa === undefined ? [] : acceptRaSettings(s.acceptRa)) {
          const now = ipv6.get(name, key);
          if (now !== undefined && now !== value) ipv6.set(name, key, value);
        }
      } catch (e) {
        return { ...base, ...master, state: 'error', ...keepOriginal(prev),
          error: `net.ipv6.conf.${name} (acceptRa): ${(e as Error).message}` };
      }
      try {
        if (Object.keys(change).length) rtnl().setLink(link.index, change);
      } catch (e) {
        return { ...base, ...master, state: 'error', error: explain(e, change.mtu), ...keepOriginal(prev) };
      }
      return {
        ...base, ...master, state: waiting ? 'pending' : 'applied', ...(waiting ? { error: waiting } : {}),
        ...(s.mtu !== undefined ? { mtu: s.mtu, originalMtu } : {}), ...(settings ? { settings } : {}),
      };
    },
    failed: (name, s, prev, error) => ({
      link: name, layer: layerOf(s), state: 'error', error, ...keepOriginal(prev),
      ...(prev?.created ? { created: prev.created } : {}), ...(prev?.master ? { master: prev.master } : {}),
    }),
    undo(name, prev, links) {
      const link = links.get(name);
      if (!link) return;
      if (prev.created && link.kind === prev.created) {
        rtnl().deleteLink(link.index);
        return;
      }
      if (prev.master && link.master === prev.master) rtnl().setLink(link.index, { master: 0 });
      if (prev.originalMtu !== undefined && link.mtu !== prev.originalMtu) {
        rtnl().setLink(link.index, { mtu: prev.originalMtu });
      }
    },
  });
}
