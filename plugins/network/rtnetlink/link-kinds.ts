// link-kinds: the IFLA_INFO_DATA of the virtual links this system creates (VLAN, bond,
// bridge) and of a bond's ports (IFLA_INFO_SLAVE_DATA), from linux/if_link.h: encoded from
// LinkSpec's settings, decoded into what LinkStatus reports.
import type { BondSettings, BridgeSettings } from '../../../proto/gen/spec-types.ts';
import { attr, attrMap, readU32, readU8 } from '../../../machinery/netlink/netlink.ts';
import { BOND_MODES, KIND_MODULES, XMIT_HASH_POLICIES } from '../../../machinery/model/link-kinds.ts';

const IFLA_VLAN_ID = 1;
const IFLA_BOND = {
  MODE: 1, ACTIVE_SLAVE: 2, MIIMON: 3, UPDELAY: 4, DOWNDELAY: 5, PRIMARY: 11, XMIT_HASH_POLICY: 14,
  MIN_LINKS: 18, AD_LACP_RATE: 21,
} as const;
const IFLA_BOND_SLAVE_STATE = 1;
const IFLA_BR = { FORWARD_DELAY: 1, STP_STATE: 5, PRIORITY: 6 } as const;
/** The kernel counts bridge times in USER_HZ ticks (clock_t), 100 a second. */
const USER_HZ = 100;

export { BOND_MODES, KIND_MODULES, XMIT_HASH_POLICIES };

const u16 = (t: number, v: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return attr.bytes(t, b);
};

export function vlanData(id: number): Buffer[] {
  return [u16(IFLA_VLAN_ID, id)];
}

/**
 * A bond's settings; `primaryIndex` is the primary port's index when it exists. `withMode`: the mode can only be
 * given when the bond is created (the kernel refuses to change it while the bond has ports or is up).
 */
export function bondData(b: BondSettings, primaryIndex: number | undefined, withMode: boolean): Buffer[] {
  const mode = BOND_MODES.indexOf((b.mode ?? 'balance-rr') as (typeof BOND_MODES)[number]);
  const hash = b.xmitHashPolicy === undefined ? -1
    : XMIT_HASH_POLICIES.indexOf(b.xmitHashPolicy as (typeof XMIT_HASH_POLICIES)[number]);
  return [
    ...(withMode ? [attr.u8(IFLA_BOND.MODE, mode < 0 ? 0 : mode)] : []),
    ...(b.miimon !== undefined ? [attr.u32(IFLA_BOND.MIIMON, b.miimon)] : []),
    ...(b.updelay !== undefined ? [attr.u32(IFLA_BOND.UPDELAY, b.updelay)] : []),
    ...(b.downdelay !== undefined ? [attr.u32(IFLA_BOND.DOWNDELAY, b.downdelay)] : []),
    ...(primaryIndex !== undefined ? [attr.u32(IFLA_BOND.PRIMARY, primaryIndex)] : []),
    ...(hash >= 0 ? [attr.u8(IFLA_BOND.XMIT_HASH_POLICY, hash)] : []),
    ...(b.minLinks !== undefined ? [attr.u32(IFLA_BOND.MIN_LINKS, b.minLinks)] : []),
    ...(b.lacpRate !== undefined ? [attr.u8(IFLA_BOND.AD_LACP_RATE, b.lacpRate === 'fast' ? 1 : 0)] : []),
  ];
}

/** A bridge's settings; spanning tree is off unless asked for. */
export function bridgeData(b: BridgeSettings): Buffer[] {
  return [
    attr.u32(IFLA_BR.STP_STATE, b.stp ? 1 : 0),
    ...(b.forwardDelay !== undefined ? [attr.u32(IFLA_BR.FORWARD_DELAY, b.forwardDelay * USER_HZ)] : []),
    ...(b.priority !== undefined ? [u16(IFLA_BR.PRIORITY, b.priority)] : []),
  ];
}

/** What LinkStatus reports of a kind's IFLA_INFO_DATA. */
export interface KindInfo { vlanId?: number; bondMode?: string; bondActiveIndex?: number; stp?: boolean }

export function decodeKindData(kind: string | undefined, data: Buffer | undefined): KindInfo {
  if (!data || !kind) return {};
  const a = attrMap(data);
  if (kind === 'vlan') {
    const id = a.get(IFLA_VLAN_ID);
    return id && id.length >= 2 ? { vlanId: id.readUInt16LE(0) } : {};
  }
  if (kind === 'bond') {
    const mode = readU8(a.get(IFLA_BOND.MODE));
    const active = readU32(a.get(IFLA_BOND.ACTIVE_SLAVE));
    return {
      ...(mode !== undefined ? { bondMode: BOND_MODES[mode] ?? `mode-${mode}` } : {}),
      ...(active ? { bondActiveIndex: active } : {}),
    };
  }
  if (kind === 'bridge') {
    const stp = readU32(a.get(IFLA_BR.STP_STATE));
    return stp !== undefined ? { stp: stp !== 0 } : {};
  }
  return {};
}

/** A bond port's state (IFLA_INFO_SLAVE_DATA of slave kind "bond"). */
export function decodePortState(
  slaveKind: string | undefined, data: Buffer | undefined,
): 'active' | 'backup' | undefined {
  if (slaveKind !== 'bond' || !data) return undefined;
  const state = readU8(attrMap(data).get(IFLA_BOND_SLAVE_STATE));
  return state === undefined ? undefined : state === 0 ? 'active' : 'backup';
}
