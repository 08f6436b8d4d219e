// disk-selector: which disk an InstallRequest names. Pure: the block devices as sysfs
// describes them in, one disk or the reason there is not exactly one out, with the
// candidates listed so that the next request can name one.
import type { BlockDeviceSpec, InstallDiskSelector } from '../../proto/gen/spec-types.ts';
import { parseSizeCondition, sizeMatches } from '../../machinery/model/size-condition.ts';

/** `*` stands for any run of characters; the rest is compared whole (sysfs pads models with spaces: trimmed). */
export function globMatches(pattern: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const literal = (p: string) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${pattern.trim().split('*').map(literal).join('.*')}$`).test(value.trim());
}

/** Whole disks a machine could install to: not partitions, CD-ROMs, loop, RAM or empty devices. */
export function isInstallableKind(d: BlockDeviceSpec): boolean {
  const name = d.devPath.replace(/^.*\//, '');
  return !d.partition && d.sizeBytes > 0 && !/^(sr|loop|ram|zram|nbd|md|dm-)\d*/.test(name);
}

export const describeDisk = (d: BlockDeviceSpec): string => [
  d.devPath, `${(d.sizeBytes / 2 ** 30).toFixed(2)} GiB`,
  ...(d.model ? [`model "${d.model}"`] : []), ...(d.serial ? [`serial "${d.serial}"`] : []),
].join(' ');

/** What the selector asks for, in words: "serial "x" and size >= 10GiB". */
export function describeSelector(s: InstallDiskSelector): string {
  const parts = [
    ...(s.path ? [`path ${s.path}`] : []), ...(s.model ? [`model "${s.model}"`] : []),
    ...(s.serial ? [`serial "${s.serial}"`] : []), ...(s.size ? [`size ${s.size}`] : []),
  ];
  return parts.join(' and ') || 'any disk';
}

export type Selection = { disk: BlockDeviceSpec; error?: undefined } | { disk?: undefined; error: string };

/**
 * The one whole disk that matches every field given. `medium` is the device the payload is read from (never a
 * target: its own disk is excluded, and naming it says so).
 */
export function selectDisk(s: InstallDiskSelector, devices: readonly BlockDeviceSpec[], medium?: string): Selection {
  const size = s.size ? parseSizeCondition(s.size) : undefined;
  if (size instanceof Error) return { error: size.message };
  if (!s.path && !s.model && !s.serial && !s.size) {
    return { error: 'the disk selector is empty: give a path, model, serial or size' };
  }
  const mediumDisk = medium ? devices.find((d) => d.devPath === medium)?.parent ?? medium.replace(/^.*\//, '') : '';
  const isMedium = (d: BlockDeviceSpec) => d.devPath.replace(/^.*\//, '') === mediumDisk;
  const named = s.path ? devices.find((d) => d.devPath === s.path) : undefined;
  if (s.path && named?.partition) {
    return { error: `${s.path} is a partition of ${named.parent ?? 'a disk'}: name the whole disk` };
  }
  if (named && isMedium(named)) return { error: `${s.path} holds the install medium the machine is reading` };
  const disks = devices.filter((d) => isInstallableKind(d) && !isMedium(d));
  const matching = disks.filter((d) => (!s.path || d.devPath === s.path)
    && (!s.model || globMatches(s.model, d.model)) && (!s.serial || globMatches(s.serial, d.serial))
    && (!size || sizeMatches(size, d.sizeBytes)));
  const candidates = disks.length ? `; the disks: ${disks.map(describeDisk).join('; ')}` : '; the machine has no disk';
  if (matching.length === 1) return { disk: matching[0]! };
  if (!matching.length) return { error: `no disk matches ${describeSelector(s)}${candidates}` };
  return { error: `${matching.length} disks match ${describeSelector(s)}: `
    + `${matching.map((d) => d.devPath).join(', ')}; add a field that tells them apart${candidates}` };
}
