// kernel-param: KernelParamSpec -> write /proc/sys/<key> -> read it back ->
// KernelParamStatus. The value found before the first write is kept in the status
// and written back when the spec goes (a finalizer holds the spec until then).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Controller } from '../../init/cosi/controller/contract.ts';
import { KERNEL_PARAM_SPEC_TYPE, KERNEL_PARAM_STATUS_TYPE, SYSTEM_NS, type KernelParamSpecSpec, type KernelParamStatusSpec } from './types.ts';

/** "net.ipv4.ip_forward" -> /proc/sys/net/ipv4/ip_forward; refuses anything that could leave /proc/sys. */
export function sysctlPath(key: string, root = '/proc/sys'): string {
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_*:-]+)*$/.test(key) && !/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_*:.-]+)*$/.test(key)) throw new Error(`invalid kernel parameter name "${key}"`);
  return join(root, ...key.includes('/') ? key.split('/') : key.split('.'));
}

const normalise = (v: string) => v.trim().split(/\s+/).join(' ');

function explain(key: string, e: NodeJS.ErrnoException): string {
  if (e.code === 'ENOENT') return `unknown kernel parameter "${key}"`;
  if (e.code === 'EINVAL') return `the kernel refused the value for "${key}" (EINVAL)`;
  if (e.code === 'EACCES' || e.code === 'EPERM') return `"${key}" is read-only or not permitted (${e.code})`;
  return `${key}: ${e.message}`;
}

export function kernelParamController(root = '/proc/sys'): Controller {
  return {
    name: 'kernel-param',
    inputs: () => [{ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, kind: 'strong' }],
    outputs: () => [{ type: KERNEL_PARAM_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      const sp = (id: string) => ({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE, id });
      const st = (id: string) => ({ namespace: SYSTEM_NS, type: KERNEL_PARAM_STATUS_TYPE, id });
      while (await ctx.next()) {
        const keep = new Set<string>();
        const statuses = new Map((await ctx.state.list({ namespace: SYSTEM_NS, type: KERNEL_PARAM_STATUS_TYPE })).map((r) => [r.metadata.id, r.spec as KernelParamStatusSpec]));
        for (const r of await ctx.state.list({ namespace: SYSTEM_NS, type: KERNEL_PARAM_SPEC_TYPE })) {
          const key = r.metadata.id;
          const prev = statuses.get(key);
          if (r.metadata.phase === 'tearingDown') {
            if (!r.metadata.finalizers.includes('kernel-param')) continue;
            if (prev?.original !== undefined) {
              try { writeFileSync(sysctlPath(key, root), prev.original); } catch (e) { ctx.log.warn(`restoring ${key}: ${(e as Error).message}`); }
            }
            await ctx.state.removeFinalizer(sp(key));
            continue;
          }
          keep.add(key);
          if (!r.metadata.finalizers.includes('kernel-param')) await ctx.state.addFinalizer(sp(key));
          const want = normalise((r.spec as KernelParamSpecSpec).value);
          let status: KernelParamStatusSpec;
          try {
            const path = sysctlPath(key, root);
            const original = prev?.original ?? normalise(readFileSync(path, 'utf8'));
            writeFileSync(path, want);
            const value = normalise(readFileSync(path, 'utf8'));
            status = value === want ? { state: 'applied', value, original } : { state: 'error', value, original, error: `wrote "${want}", the kernel reports "${value}"` };
          } catch (e) {
            status = { state: 'error', error: e instanceof Error && 'code' in e ? explain(key, e as NodeJS.ErrnoException) : (e as Error).message, ...(prev?.original !== undefined ? { original: prev.original } : {}) };
          }
          await ctx.state.put(st(key), status);
        }
        await ctx.state.cleanup({ namespace: SYSTEM_NS, type: KERNEL_PARAM_STATUS_TYPE }, keep);
      }
    },
  };
}
