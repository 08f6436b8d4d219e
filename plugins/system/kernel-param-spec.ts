// kernel-param-spec: MergedKernelParamSpec (id = key) -> write /proc/sys/<key> -> read
// it back -> KernelParamSpecStatus (a value already in place is not written). The value found before the
// first write is kept in the status and written back when the spec goes.
import { readFileSync, writeFileSync } from 'node:fs';
import { errnoOf } from '../../native/errno.ts';
import { sysctlPath } from '../../machinery/sys/sysctl.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { type KernelParamSpecSpec, type KernelParamSpecStatusSpec } from './types.ts';
import {
  KERNEL_PARAM_SPEC_STATUS_TYPE, MERGED_KERNEL_PARAM_SPEC_TYPE, SYSTEM_NS,
} from '../../proto/gen/resource-types.ts';

const normalise = (v: string) => v.trim().split(/\s+/).join(' ');

function explain(key: string, e: unknown): string {
  switch (errnoOf(e)) {
    case 'ENOENT': return `unknown kernel parameter "${key}"`;
    case 'EINVAL': return `the kernel refused the value for "${key}" (EINVAL)`;
    case 'EACCES': case 'EPERM': return `"${key}" is read-only or not permitted (${errnoOf(e)})`;
    default: return `${key}: ${(e as Error).message}`;
  }
}

export function kernelParamSpecController(root = '/proc/sys') {
  const keep = (prev: KernelParamSpecStatusSpec | undefined) => (
    prev?.original !== undefined ? { original: prev.original } : {}
  );
  return specController<KernelParamSpecSpec, KernelParamSpecStatusSpec, null>({
    name: 'kernel-param-spec', namespace: SYSTEM_NS, specType: MERGED_KERNEL_PARAM_SPEC_TYPE,
    statusType: KERNEL_PARAM_SPEC_STATUS_TYPE,
    observe: () => null,
    apply(key, s, prev) {
      const want = normalise(s.value);
      const path = sysctlPath(key, root);
      try {
        const found = normalise(readFileSync(path, 'utf8'));
        const original = prev?.original ?? found;
        // A value in place is not written again: PID 1 wrote the hardening defaults with every capability, and a
        // few keys (vm.mmap_min_addr: CAP_SYS_RAWIO) refuse this plugin's write even of the same value.
        if (found !== want) writeFileSync(path, want);
        const value = found === want ? found : normalise(readFileSync(path, 'utf8'));
        if (value !== want) {
          return {
            state: 'error', value, original, layer: layerOf(s), error: `wrote "${want}", the kernel reports "${value}"`,
          };
        }
        return { state: 'applied', value, original, layer: layerOf(s) };
      } catch (e) {
        return { state: 'error', error: explain(key, e), layer: layerOf(s), ...keep(prev) };
      }
    },
    failed: (_key, s, prev, error) => ({ state: 'error', error, layer: layerOf(s), ...keep(prev) }),
    undo(key, prev) { if (prev.original !== undefined) writeFileSync(sysctlPath(key, root), prev.original); },
  });
}
