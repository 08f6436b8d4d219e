// meminfo: used memory the way `free` computes it (MemTotal - MemAvailable).
import { readFileSync } from 'node:fs';

export function parseMeminfo(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+):\s+(\d+)/.exec(line);
    if (match) m.set(match[1]!, Number(match[2]));
  }
  return m;
}

export function usedMemoryKiB(path = '/proc/meminfo'): number {
  const m = parseMeminfo(readFileSync(path, 'utf8'));
  return (m.get('MemTotal') ?? 0) - (m.get('MemAvailable') ?? 0);
}

/**
 * Where used memory goes, in the kernel's own words: processes' anonymous pages, tmpfs and the initramfs (Shmem:
 * the system image lives there), the page cache, slab, page tables and kernel stacks.
 */
export const MEMORY_PARTS = [
  'MemTotal', 'MemAvailable', 'AnonPages', 'Shmem', 'Cached', 'SUnreclaim', 'SReclaimable', 'PageTables', 'KernelStack',
] as const;

export function memoryParts(path = '/proc/meminfo'): Map<string, number> {
  const m = parseMeminfo(readFileSync(path, 'utf8'));
  return new Map(MEMORY_PARTS.map((k) => [k, m.get(k) ?? 0]));
}
