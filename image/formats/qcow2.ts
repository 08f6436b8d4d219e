// qcow2: the raw disk converted (compressed) by qemu-img, for QEMU/KVM hosts and OpenStack.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { OutputFormat } from './format.ts';

export const qcow2: OutputFormat = {
  name: 'qcow2',
  summary: 'the raw disk as qcow2 (QEMU/KVM, libvirt, OpenStack Glance)',
  build(ctx) {
    const out = join(ctx.outDir, 'appliance.qcow2');
    execFileSync('qemu-img', ['convert', '-c', '-f', 'raw', '-O', 'qcow2', ctx.raw().file, out], { stdio: 'pipe' });
    return [out];
  },
};
