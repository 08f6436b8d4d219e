// link-status: the kernel's links, with their addresses (IPv6 link-local included)
// -> LinkStatus resources. Woken by link and address notifications (no polling);
// every reconcile lists all links, so a missed notification costs nothing but latency.
import { readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import type { Controller, ControllerState } from '../../cosi/controller/contract.ts';
import { isErrno } from '../../native/errno.ts';
import type { RtnlApi } from './rtnetlink/client.ts';
import { ipv6RouterOf } from './rtnetlink/link.ts';
import { type LinkStatusSpec } from './types.ts';
import { LINK_STATUS_TYPE, NETWORK_NS } from '../../proto/gen/resource-types.ts';

/** The LinkStatuses by link name (what the spec controllers observe). */
export async function linksByName(state: ControllerState): Promise<Map<string, LinkStatusSpec>> {
  return new Map((await state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE }))
    .map((r) => [r.metadata.id, r.spec as LinkStatusSpec]));
}

/** The driver bound to a link's device, from sysfs (netplan's match.driver); undefined for a virtual link. */
export function sysfsDriver(link: string): string | undefined {
  try {
    return basename(readlinkSync(`/sys/class/net/${link}/device/driver`));
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined;
    throw e;
  }
}

export function linkStatusController(rtnl: () => RtnlApi, driverOf = sysfsDriver): Controller {
  return {
    name: 'link-status',
    inputs: () => [],
    outputs: () => [{ type: LINK_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const stop = rtnl().watchLinks(() => ctx.requestReconcile(), () => ctx.requestReconcile());
      try {
        while (await ctx.next()) {
          const keep = new Set<string>();
          const addresses = new Map<number, string[]>();
          for (const a of rtnl().addresses()) {
            addresses.set(a.index, [...(addresses.get(a.index) ?? []), `${a.address}/${a.prefix}`]);
          }
          const all = rtnl().links();
          const nameOf = new Map(all.map((l) => [l.index, l.name]));
          for (const l of all) {
            keep.add(l.name);
            const spec: LinkStatusSpec = {
              index: l.index, type: l.type, up: l.up, operState: l.operState,
              ...(l.kind ? { kind: l.kind } : {}), ...(l.mtu !== undefined ? { mtu: l.mtu } : {}),
              ...(l.mac ? { mac: l.mac } : {}), ...(l.carrier !== undefined ? { carrier: l.carrier } : {}),
              addresses: (addresses.get(l.index) ?? []).sort(),
            };
            const driver = l.type === 'loopback' || l.kind ? undefined : driverOf(l.name);
            if (driver) spec.driver = driver;
            const named = (i: number | undefined) => (i !== undefined ? nameOf.get(i) : undefined);
            Object.assign(spec, Object.fromEntries(Object.entries({
              master: named(l.masterIndex), parent: named(l.parentIndex), vlanId: l.info?.vlanId,
              bondMode: l.info?.bondMode, bondActive: named(l.info?.bondActiveIndex), portState: l.portState,
              stp: l.info?.stp, ipv6Router: ipv6RouterOf(l.ipv6Flags),
            }).filter(([, v]) => v !== undefined)));
            await ctx.state.put({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id: l.name }, spec);
          }
          await ctx.state.cleanup({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE }, keep);
        }
      } finally { stop(); }
    },
  };
}
