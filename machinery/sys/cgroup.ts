// cgroup: the cgroup v2 groups extensions run in, each with its own memory and CPU limit. PID 1
// mounts the unified hierarchy at /sys/fs/cgroup and leaves every process in its root; a group
// only limits what its parent hands it a controller for (cgroup.subtree_control), so the memory and
// cpu controllers are turned on from the root down to `extensions/` before a group is made there.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../../native/errno.ts';

export const CGROUP_ROOT = '/sys/fs/cgroup';
/** The parent of every extension's group. */
export const EXTENSIONS_GROUP = 'extensions';
const CONTROLLERS = ['memory', 'cpu'] as const;
/** cpu.max's period: a percentage of one CPU is this many microseconds of it per period. */
const CPU_PERIOD_US = 100_000;

export interface GroupLimits {
  /** memory.max, bytes; undefined: no limit of its own. */
  memoryBytes?: number;
  /** cpu.max as a percentage of one CPU (200: two CPUs); undefined: no limit of its own. */
  cpuPercent?: number;
}

/** What cpu.max says for a percentage of one CPU ("max" for none). */
export function cpuMaxText(percent?: number): string {
  if (percent === undefined) return `max ${CPU_PERIOD_US}`;
  // The kernel refuses a quota under 1 ms.
  return `${Math.max(1000, Math.round(percent * CPU_PERIOD_US / 100))} ${CPU_PERIOD_US}`;
}

function enableControllers(group: string): void {
  const file = join(group, 'cgroup.subtree_control');
  const on = new Set(readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean));
  const missing = CONTROLLERS.filter((c) => !on.has(c));
  if (missing.length === 0) return;
  const offered = readFileSync(join(group, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  const absent = missing.filter((c) => !offered.includes(c));
  if (absent.length) throw new Error(`${group}: the kernel offers no ${absent.join(', ')} controller`);
  writeFileSync(file, missing.map((c) => `+${c}`).join(' '));
}

/**
 * Makes (or reuses) the group of extension `name` with these limits and returns its directory; processes
 * join it through `joinGroup`. Throws an Error naming the file that could not be written.
 */
export function prepareGroup(name: string, limits: GroupLimits, root = CGROUP_ROOT): string {
  const parent = join(root, EXTENSIONS_GROUP);
  const dir = join(parent, name);
  const step = (what: string, f: () => void) => {
    try {
      f();
    } catch (e) {
      throw new Error(`cgroup ${dir}: ${what}: ${(e as Error).message}`, { cause: e });
    }
  };
  step('turning on memory and cpu at the root', () => enableControllers(root));
  step('making extensions/', () => mkdirSync(parent, { recursive: true }));
  step('turning on memory and cpu for extensions/', () => enableControllers(parent));
  step('making the group', () => mkdirSync(dir, { recursive: true }));
  step('memory.max', () => writeFileSync(join(dir, 'memory.max'), limits.memoryBytes === undefined
    ? 'max' : String(limits.memoryBytes)));
  // Out of memory, the whole extension goes (its helpers too), not one process picked inside it.
  step('memory.oom.group', () => writeFileSync(join(dir, 'memory.oom.group'), '1'));
  step('cpu.max', () => writeFileSync(join(dir, 'cpu.max'), cpuMaxText(limits.cpuPercent)));
  return dir;
}

/** Moves the calling process into `group` (its later allocations are charged there). */
export function joinGroup(group: string): void {
  writeFileSync(join(group, 'cgroup.procs'), String(process.pid));
}

/** Whether processes still live in the group (cgroup.events: populated). */
const populated = (group: string) => /^populated 1$/m.test(readFileSync(join(group, 'cgroup.events'), 'utf8'));

/**
 * Ends every process left in the group (cgroup.kill: what its program forked and left behind) and removes
 * it; resolves once it is gone (or there was none), rejects naming the group when it would not go in `ms`.
 */
export async function removeGroup(group: string, ms = 2000): Promise<void> {
  if (!existsSync(group)) return;
  if (populated(group)) writeFileSync(join(group, 'cgroup.kill'), '1');
  const deadline = Date.now() + ms;
  while (populated(group)) {
    if (Date.now() > deadline) throw new Error(`cgroup ${group}: processes still in it ${ms} ms after cgroup.kill`);
    await new Promise((r) => setTimeout(r, 20));
  }
  try {
    rmdirSync(group);
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw new Error(`cgroup ${group}: ${(e as Error).message}`, { cause: e });
  }
}
