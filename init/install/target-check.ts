// target-check: whether an install may write the disk it chose. Pure: what the installer found on
// the disk comes in, the reasons to refuse go out (none: write it). A refused disk is not touched.
import type { BlockDeviceSpec } from '../../proto/gen/spec-types.ts';
import type { InstallRecord } from './install-record.ts';

export interface TargetFacts {
  disk: BlockDeviceSpec;
  /** The disk's partitions as the kernel sees them. */
  partitions: readonly BlockDeviceSpec[];
  /** Filesystems mounted from the disk or its partitions: device and mount point. */
  mounted: readonly { device: string; target: string }[];
  /** The size of the disk image to write. */
  imageBytes: number;
  /** A STATE filesystem on the disk: its device and what its install record says (or why it says nothing). */
  state?: { device: string; record?: InstallRecord; unreadable?: string };
  /** This machine's SMBIOS UUID, when it has one. */
  machineId?: string;
}

const what = (d: BlockDeviceSpec) =>
  `${d.devPath}${d.fstype ? ` (${d.fstype}${d.label ? ` "${d.label}"` : ''})` : ''}`;

/** The reasons not to write the disk: empty when it may be written. */
export function targetProblems(f: TargetFacts, wipe: boolean): string[] {
  const problems: string[] = [];
  const disk = f.disk.devPath;
  if (f.disk.readOnly) problems.push(`${disk} is read-only`);
  if (f.disk.sizeBytes < f.imageBytes) {
    problems.push(`${disk} holds ${f.disk.sizeBytes} bytes; the image needs ${f.imageBytes}`);
  }
  if (f.mounted.length) {
    problems.push(`${disk} has mounted filesystems (${f.mounted.map((m) => `${m.device} on ${m.target}`).join(', ')}): `
      + 'unmount them first (delete the MountSpecs that mount them); wipe does not override this');
  }
  if (wipe) return problems;
  const record = f.state?.record;
  if (f.state && !(record && f.machineId && record.machineId === f.machineId)) {
    const whose = record
      ? `machine ${record.machineId || '(no SMBIOS UUID)'}, installed ${record.installedAt} with ${record.version}`
      : `no install record: ${f.state.unreadable ?? 'made by a disk image, not an install'}`;
    problems.push(`${disk} holds the STATE of another machine on ${f.state.device} (${whose}); set wipe: true to `
      + 'overwrite it and its machine config');
  } else if (!f.state && (f.partitions.length || f.disk.fstype)) {
    const held = f.partitions.length ? `partitions ${f.partitions.map(what).join(', ')}`
      : `a ${f.disk.fstype} filesystem`;
    problems.push(`${disk} holds ${held}; set wipe: true to overwrite them`);
  }
  return problems;
}
