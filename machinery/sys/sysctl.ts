// sysctl: kernel parameters under /proc/sys, by their dotted names, for PID 1 (the hardening it
// applies before any plugin runs) and the system plugin (every KernelParamSpec).
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';
import { join } from 'node:path';

/**
 * "net.ipv4.ip_forward" -> /proc/sys/net/ipv4/ip_forward; the slash form ("net/ipv4/conf/eth0.100/rp_filter")
 * for names with dots. Refuses anything that could leave /proc/sys ("." or ".." as a part).
 */
export function sysctlPath(key: string, root = '/proc/sys'): string {
  const parts = key.includes('/') ? key.split('/') : key.split('.');
  if ((!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_*:-]+)*$/.test(key) && !/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_*:.-]+)*$/.test(key))
    || parts.some((p) => p === '.' || p === '..')) {
    throw new Error(`invalid kernel parameter name "${key}"`);
  }
  return join(root, ...parts);
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
    try {
      const path = sysctlPath(key, root);
      if (!existsSync(path)) {
        r.absent.push(key);
        continue;
      }
      writeFileSync(path, value);
      r.written.push(key);
    } catch (e) {
      r.failed.push({ key, why: (e as Error).message });
    }
  }
  return r;
}

/**
 * The `net.ipv4.conf.all.*` and `net.ipv6.conf.all.*` keys also for each interface that exists now. Why: an
 * interface takes the `default` values when it is made, so one made before they were set (a NIC whose driver is
 * built in) keeps the kernel's; and without forwarding IPv4 accepts a redirect when either `all` or the
 * interface says so, while IPv6 reads the interface's own value only.
 */
export function withExistingInterfaces<P extends { key: string; value: string }>(
  params: readonly P[], root = '/proc/sys',
): (P | { key: string; value: string })[] {
  const out: (P | { key: string; value: string })[] = [...params];
  for (const p of params) {
    const m = /^net\.(ipv4|ipv6)\.conf\.all\.([A-Za-z0-9_-]+)$/.exec(p.key);
    if (!m) continue;
    let links: string[];
    try {
      links = readdirSync(join(root, 'net', m[1]!, 'conf'));
    } catch (e) {
      if (isErrno(e, 'ENOENT')) continue; // no IPv6 (or no IPv4) in this kernel
      throw e;
    }
    for (const link of links.sort()) {
      if (link !== 'all' && link !== 'default') out.push({ key: `net/${m[1]}/conf/${link}/${m[2]}`, value: p.value });
    }
  }
  return out;
}
