// sysctl: kernel parameters under /proc/sys, by their dotted names, for PID 1 (the hardening it
// applies before any plugin runs) and the system plugin (every KernelParamSpec).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** "net.ipv4.ip_forward" -> /proc/sys/net/ipv4/ip_forward; refuses anything that could leave /proc/sys. */
export function sysctlPath(key: string, root = '/proc/sys'): string {
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_*:-]+)*$/.test(key) && !/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_*:.-]+)*$/.test(key)) {
    throw new Error(`invalid kernel parameter name "${key}"`);
  }
  return join(root, ...key.includes('/') ? key.split('/') : key.split('.'));
}

export interface SysctlWrites {
  written: string[];
  /** Keys this kernel does not have (their feature is not built in). */
  absent: string[];
  failed: { key: string; why: string }[];
}

/** Writes each value; a key the kernel lacks is skipped, a refused write is reported, and the rest go on. */
export function writeSysctls(params: readonly { key: string; value: string }[], root = '/proc/sys'): SysctlWrites {
  const r: SysctlWrites = { written: [], absent: [], failed: [] };
  for (const { key, value } of params) {
    const path = sysctlPath(key, root);
    if (!existsSync(path)) { r.absent.push(key); continue; }
    try {
      writeFileSync(path, value);
      r.written.push(key);
    } catch (e) {
      r.failed.push({ key, why: (e as Error).message });
    }
  }
  return r;
}
