// capabilities: a process's capability sets as /proc/PID/status shows them (CapInh, CapPrm,
// CapEff, CapBnd, CapAmb: 64-bit masks in hex), and their names (capabilities(7)).
import { CAPABILITY, type CapabilityName } from '../../native/index.ts';

export type CapabilitySet = 'CapInh' | 'CapPrm' | 'CapEff' | 'CapBnd' | 'CapAmb';

/** The capability numbers in one set of a /proc/PID/status text. */
export function capabilitySet(status: string, set: CapabilitySet): Set<number> {
  const hex = new RegExp(`^${set}:\\s+([0-9a-f]+)$`, 'm').exec(status)?.[1];
  if (!hex) throw new Error(`the status text has no ${set} line`);
  const bits = BigInt(`0x${hex}`);
  return new Set([...Array(64).keys()].filter((b) => (bits >> BigInt(b)) & 1n));
}

/** The capabilities the process holds (its permitted set). */
export const heldCapabilities = (status: string) => capabilitySet(status, 'CapPrm');

const NAMES = new Map<number, CapabilityName>(
  Object.entries(CAPABILITY).map(([k, v]): [number, CapabilityName] => [v, k as CapabilityName]),
);

/** Names for capability numbers, sorted; one without a name here is "cap_N". */
export const capabilityNames = (numbers: Iterable<number>): string[] =>
  [...numbers].sort((a, b) => a - b).map((c) => NAMES.get(c) ?? `cap_${c}`);
