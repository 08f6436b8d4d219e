// cloud-config: cloud-init's `#cloud-config` user-data -> resource documents of this
// system. The keys that map onto it are translated; every other key is listed as
// ignored with why (this system has no shell, packages or login users), never dropped
// silently. The documents then meet the same validation as any machine config.
import { HOSTNAME_SPEC_TYPE, TIME_SERVER_SPEC_TYPE } from '../../../proto/gen/resource-types.ts';
import { isMap } from '../safe-yaml.ts';
import type { ConfigDocument, Translation } from './translation.ts';
import { translateWriteFiles } from './write-files.ts';


/** The id of every document translated from cloud-init input. */
export const CLOUD_INIT_ID = 'cloud-init';

const NO_SHELL = 'commands are not run: this system has no shell (declare resources instead)';
const NO_PACKAGES = 'this system has no package manager (it is one image)';
const NO_LOGINS = 'this system has no login users or SSH: it is operated through its API';
const WHY: Record<string, string> = {
  runcmd: NO_SHELL, bootcmd: NO_SHELL, power_state: 'use a PowerRequest resource',
  packages: NO_PACKAGES, package_update: NO_PACKAGES, package_upgrade: NO_PACKAGES,
  package_reboot_if_required: NO_PACKAGES, apt: NO_PACKAGES, yum_repos: NO_PACKAGES, snap: NO_PACKAGES,
  users: NO_LOGINS, groups: NO_LOGINS, ssh_authorized_keys: NO_LOGINS, ssh_pwauth: NO_LOGINS, chpasswd: NO_LOGINS,
  password: NO_LOGINS, ssh_keys: NO_LOGINS, disable_root: NO_LOGINS, ssh_deletekeys: NO_LOGINS,
  timezone: 'this system keeps UTC (there is no time zone setting)',
  locale: 'this system has no locales', keyboard: 'this system has no console keyboard setting',
  mounts: 'declare MountSpec resources instead', disk_setup: 'declare storage resources instead',
  fs_setup: 'declare storage resources instead', growpart: 'the image grows its own partitions',
  resize_rootfs: 'the image grows its own partitions',
  final_message: 'the console prints its own summary line',
};

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

export function translateCloudConfig(cfg: Record<string, unknown>): Translation {
  const docs: ConfigDocument[] = [];
  const ignored: string[] = [];
  const ignore = (key: string, why: string) => ignored.push(`cloud-config ${key}: ${why}`);
  for (const key of Object.keys(cfg)) {
    if (['hostname', 'fqdn', 'ntp', 'manage_etc_hosts', 'preserve_hostname', 'prefer_fqdn_over_hostname',
      'write_files'].includes(key)) continue;
    ignore(key, WHY[key] ?? 'not supported by this system');
  }
  // hostname and fqdn: the short name from hostname (or the fqdn's first label), the domain from the fqdn.
  const fqdn = typeof cfg.fqdn === 'string' ? cfg.fqdn : undefined;
  const host = typeof cfg.hostname === 'string' ? cfg.hostname : undefined;
  if (cfg.preserve_hostname === true && (fqdn || host)) {
    ignore('hostname', 'preserve_hostname is true: the hostname is left as it is');
  } else if (fqdn || host) {
    const short = (host ?? fqdn!).split('.')[0]!;
    const domain = fqdn?.includes('.') ? fqdn.slice(fqdn.indexOf('.') + 1)
      : host?.includes('.') ? host.slice(host.indexOf('.') + 1) : undefined;
    const spec = { hostname: short, ...(domain ? { domainname: domain } : {}) };
    docs.push({ type: HOSTNAME_SPEC_TYPE, id: CLOUD_INIT_ID, spec });
  }
  if (cfg.manage_etc_hosts === false) ignore('manage_etc_hosts', '/etc/hosts always follows the hostname here');
  if (cfg.ntp !== undefined) {
    const ntp = isMap(cfg.ntp) ? cfg.ntp : {};
    if (!isMap(cfg.ntp)) ignore('ntp', 'must be a mapping');
    const servers = [...strings(ntp.servers), ...strings(ntp.pools)];
    if (ntp.enabled === false) ignore('ntp.enabled', 'false is not supported: time sync stays on');
    if (servers.length) docs.push({ type: TIME_SERVER_SPEC_TYPE, id: CLOUD_INIT_ID, spec: { servers } });
    for (const k of Object.keys(ntp)) {
      if (!['servers', 'pools', 'enabled'].includes(k)) ignore(`ntp.${k}`, 'this system has its own SNTP client');
    }
  }
  if (cfg.write_files !== undefined) {
    const files = translateWriteFiles(cfg.write_files);
    docs.push(...files.docs);
    ignored.push(...files.ignored.map((why) => `cloud-config ${why}`));
  }
  return { docs, ignored };
}
