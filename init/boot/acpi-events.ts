// acpi-events: ACPI events as the kernel multicasts them over generic netlink (family
// "acpi_event", group "acpi_mc_group"; drivers/acpi/event.c): the power button, lid,
// AC adapter. Each carries struct acpi_genl_event { char device_class[20];
// char bus_id[15]; u32 type; u32 data; } (natural alignment: 44 bytes).
import { isErrno } from '../../native/errno.ts';
import type { Native } from '../../native/index.ts';
import { decodeFamily, decodeGenl, getFamilyRequest, NETLINK_GENERIC } from '../../machinery/netlink/genetlink.ts';
import { answerOf, attrMap, decodeMessages } from '../../machinery/netlink/netlink.ts';

export const ACPI_FAMILY = 'acpi_event';
export const ACPI_GROUP = 'acpi_mc_group';
const ACPI_GENL_CMD_EVENT = 1;
const ACPI_GENL_ATTR_EVENT = 1;
const EVENT_SIZE = 44;

export interface AcpiEvent { deviceClass: string; busId: string; type: number; data: number }

const cstr = (b: Buffer, from: number, len: number) => b.toString('latin1', from, from + len).replace(/\0.*$/s, '');

/** The ACPI events in one datagram from the acpi_mc_group (usually one). */
export function decodeAcpiEvents(datagram: Buffer, familyId: number): AcpiEvent[] {
  const out: AcpiEvent[] = [];
  for (const m of decodeMessages(datagram)) {
    if (m.type !== familyId) continue;
    const g = decodeGenl(m);
    if (g.cmd !== ACPI_GENL_CMD_EVENT) continue;
    const e = attrMap(g.attrs).get(ACPI_GENL_ATTR_EVENT);
    if (!e || e.length < EVENT_SIZE) continue;
    out.push({
      deviceClass: cstr(e, 0, 20), busId: cstr(e, 20, 15), type: e.readUInt32LE(36), data: e.readUInt32LE(40),
    });
  }
  return out;
}

export const isPowerButton = (e: AcpiEvent) => e.deviceClass.startsWith('button/power');

/** Resolves the acpi_event family; undefined when the kernel has none (no ACPI, or no CONFIG_NET). */
export function resolveAcpiFamily(n: Native): { id: number; group: number } | undefined {
  const fd = n.netlinkOpen(NETLINK_GENERIC);
  try {
    const [m] = answerOf(n.netlinkRequest(fd, getFamilyRequest(1, ACPI_FAMILY), 2000), 1,
      `resolve genetlink family ${ACPI_FAMILY}`);
    if (!m) return undefined;
    const f = decodeFamily(m);
    const group = f.groups.get(ACPI_GROUP);
    return group === undefined ? undefined : { id: f.id, group };
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined; // no such family in this kernel
    throw e;
  } finally { n.closeFd(fd); }
}

/** Calls onEvent for each ACPI event; returns stop(), or undefined without the family. */
export function watchAcpiEvents(n: Native, onEvent: (e: AcpiEvent) => void): (() => void) | undefined {
  const family = resolveAcpiFamily(n);
  if (!family) return undefined;
  const fd = n.netlinkOpen(NETLINK_GENERIC, [family.group]);
  const stop = n.subscribeDatagrams(fd, (d) => {
    for (const e of decodeAcpiEvents(d, family.id)) onEvent(e);
  });
  return () => {
    stop();
    n.closeFd(fd);
  };
}
