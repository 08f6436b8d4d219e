// link-kinds: the virtual links a LinkSpec may declare, named as the kernel and netplan name
// their settings: shared by the network plugin (which makes them) and the cloud-init
// translators (which read them from network-config).

/** Bonding modes, in the kernel's order (BOND_MODE_ROUNDROBIN = 0, ...). */
export const BOND_MODES = [
  'balance-rr', 'active-backup', 'balance-xor', 'broadcast', '802.3ad', 'balance-tlb', 'balance-alb',
] as const;

/** A bond's transmit hash policies, in the kernel's order (BOND_XMIT_POLICY_LAYER2 = 0, ...). */
export const XMIT_HASH_POLICIES = ['layer2', 'layer3+4', 'layer2+3', 'encap2+3', 'encap3+4'] as const;

/** A bond's LACPDU rates (802.3ad), in the kernel's order (slow = 0). */
export const LACP_RATES = ['slow', 'fast'] as const;

/** The module that brings each kind (what the kernel's "rtnl-link-<kind>" alias names). */
export const KIND_MODULES: Record<string, string> = { bond: 'bonding', bridge: 'bridge', vlan: '8021q' };
