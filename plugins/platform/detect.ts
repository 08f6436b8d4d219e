// detect: which platform this machine runs on, before any network wait, and so which
// platform sources are asked. In order: appliance.platform= on the command line; a
// nocloud ds= (command line or SMBIOS serial); a seed volume's label (cidata,
// config-2); SMBIOS vendor strings (Amazon EC2, Google Compute Engine, OpenStack); a
// QEMU fw_cfg config file; otherwise metal.
import { CONFIG_DRIVE_LABEL } from './sources/openstack.ts';
import { dsOf, NOCLOUD_LABELS } from './sources/nocloud.ts';
import { FW_CFG_FILE } from './sources/fw-cfg.ts';
import type { SourceEnv } from './sources/source.ts';

export const PLATFORMS = ['metal', 'qemu', 'nocloud', 'openstack', 'aws', 'gcp'] as const;
export type PlatformName = typeof PLATFORMS[number];
export const PLATFORM_PARAM = 'appliance.platform';

export interface Detected { platform: PlatformName; by: string }

export function detectPlatform(env: SourceEnv): Detected {
  const asked = env.params[PLATFORM_PARAM];
  const bad = asked !== undefined && !(PLATFORMS as readonly string[]).includes(asked)
    ? `${PLATFORM_PARAM}=${asked} is not a platform (${PLATFORMS.join(', ')}); ` : '';
  if (asked !== undefined && !bad) return { platform: asked as PlatformName, by: `${PLATFORM_PARAM}=${asked}` };
  const found = (platform: PlatformName, by: string): Detected => ({ platform, by: bad + by });
  const ds = dsOf(env);
  if (ds) return found('nocloud', `ds=${ds.ds.kind} in ${ds.from}`);
  const labels = env.volumes().map((v) => v.label);
  const seed = labels.find((l) => NOCLOUD_LABELS.includes(l));
  if (seed) return found('nocloud', `a volume labelled ${seed}`);
  if (labels.includes(CONFIG_DRIVE_LABEL)) return found('openstack', `a volume labelled ${CONFIG_DRIVE_LABEL}`);
  const { sysVendor, productName, biosVendor } = env.dmi;
  if (/Amazon EC2/i.test(sysVendor) || /^Amazon/i.test(biosVendor)) {
    return found('aws', `SMBIOS vendor "${sysVendor || biosVendor}"`);
  }
  if (/Google Compute Engine/i.test(productName) || /^Google$/i.test(sysVendor)) {
    return found('gcp', `SMBIOS product "${productName || sysVendor}"`);
  }
  if (/OpenStack/i.test(productName) || /OpenStack/i.test(sysVendor)) {
    return found('openstack', `SMBIOS product "${productName}"`);
  }
  if (env.exists(FW_CFG_FILE)) return found('qemu', 'a QEMU fw_cfg config file');
  return found('metal', 'nothing else matched');
}
