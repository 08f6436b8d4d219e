// machine-id: what tells this machine from another across reinstalls: the firmware's SMBIOS
// system UUID (the one a hypervisor or a board vendor sets). Placeholders some firmware leaves
// (all zeros, all ones) identify nothing.
import { readOptional } from './optional-fs.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The machine's SMBIOS UUID in lower case, or undefined when it has none worth the name. */
export function machineId(dmi = '/sys/class/dmi/id'): string | undefined {
  const id = readOptional(`${dmi}/product_uuid`)?.trim().toLowerCase();
  if (!id || !UUID_RE.test(id)) return undefined;
  const hex = id.replace(/-/g, '');
  return /^0+$/.test(hex) || /^f+$/.test(hex) ? undefined : id;
}
