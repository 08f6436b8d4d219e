// config-seeds: what a platform hands a machine its config with, made for QEMU runs
// (the platform tests and bench:config): NoCloud and config-drive volumes (ISO with
// xorriso, vfat with mtools, no root or mounts), a STATE disk holding a saved config,
// MIME multipart user data, and the guest-side addresses of the metadata servers.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatSavedConfig, CONFIG_FILE, type SavedConfig } from '../machinery/config/saved-config.ts';

/** Where a seed URL points inside the guest (slirp guestfwd to a server on 127.0.0.1). */
export const SEED_ADDR = { guestAddr: '10.0.2.100', guestPort: 80 };
/** A cloud's link-local network: the guest leases 169.254.0.15; guestfwd forwards only inside slirp's net. */
export const CLOUD_NET = { net: '169.254.0.0/16', host: '169.254.0.2', dhcpStart: '169.254.0.15' };
/** EC2's and GCE's metadata service inside the guest (with CLOUD_NET). */
export const METADATA_ADDR = { guestAddr: '169.254.169.254', guestPort: 80 };

/** cloud-config and our own config as MIME multipart user data, as cloud tooling sends both. */
export const multipartUserData = (cloudConfig: string, ownConfig: string) => [
  'Content-Type: multipart/mixed; boundary="==BOUNDARY=="', 'MIME-Version: 1.0', '',
  '--==BOUNDARY==', 'Content-Type: text/cloud-config; charset="us-ascii"', '', cloudConfig,
  '--==BOUNDARY==', 'Content-Type: text/x-appliance-config', '', ownConfig, '--==BOUNDARY==--', '',
].join('\n');

/** Files into a directory tree under `dir`, returned. */
function tree(dir: string, name: string, content: Record<string, string>): string {
  const root = join(dir, name);
  for (const [p, text] of Object.entries(content)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  return root;
}

/** An ISO 9660 volume (Joliet, Rock Ridge) labelled `label` holding `content`. */
export function isoSeed(dir: string, name: string, label: string, content: Record<string, string>): string {
  const out = join(dir, `${name}.iso`);
  execFileSync('xorriso', ['-as', 'mkisofs', '-quiet', '-output', out, '-volid', label, '-joliet', '-rock',
    tree(dir, name, content)], { stdio: 'pipe' });
  return out;
}

/** A 4 MiB vfat volume labelled `label` holding `content` (files at its root). */
export function vfatSeed(dir: string, name: string, label: string, content: Record<string, string>): string {
  const out = join(dir, `${name}.img`);
  execFileSync('truncate', ['-s', '4M', out]);
  execFileSync('mkfs.vfat', ['-n', label, out], { stdio: 'pipe' });
  for (const [p, text] of Object.entries(content)) {
    const f = join(dir, `${name}-${p}`);
    writeFileSync(f, text);
    execFileSync('mcopy', ['-i', out, f, `::${p}`]);
  }
  return out;
}

/** An ext4 disk labelled STATE, holding `saved` as the persisted machine config when given. */
export function stateDisk(dir: string, name: string, saved?: SavedConfig): string {
  const out = join(dir, `${name}.img`);
  execFileSync('truncate', ['-s', '32M', out]);
  const content = saved ? tree(dir, `${name}-root`, { [CONFIG_FILE]: formatSavedConfig(saved) }) : undefined;
  execFileSync('mke2fs', ['-q', '-t', 'ext4', '-L', 'STATE', ...(content ? ['-d', content] : []), out]);
  return out;
}

/**
 * A rack server's network as a NoCloud seed (qemu/network.test.ts, bench:network): two ports (the NICs
 * `hubNics: 2` makes) bonded active-backup with the address the API is reached at, and a VLAN on the bond.
 * `userData` carries the run's CA (a config from fw_cfg would win over the seed, network and all).
 */
export const BOND_NETWORK_CONFIG = `version: 2
ethernets:
  port0: {match: {macaddress: "52:54:00:00:00:a0"}}
  port1: {match: {macaddress: "52:54:00:00:00:a1"}}
bonds:
  bond0:
    interfaces: [port0, port1]
    parameters: {mode: active-backup, mii-monitor-interval: 100, primary: port0}
    addresses: [10.0.2.15/24]
    routes: [{to: default, via: 10.0.2.2}]
vlans:
  vlan7:
    id: 7
    link: bond0
    addresses: [192.168.7.10/24, "fd00:7::10/64"]
`;

export const bondSeed = (dir: string, userData: string) => isoSeed(dir, 'bond', 'cidata', {
  'meta-data': 'instance-id: iid-bond\n', 'network-config': BOND_NETWORK_CONFIG, 'user-data': userData,
});
