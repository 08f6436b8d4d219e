// aws: what EC2 imports (docs/aws.md): the raw disk, and the same disk as a stream-optimized
// VMDK (smaller to upload; `aws ec2 import-snapshot` takes either). The disk is the same as
// for bare metal: its command line already sends the console to ttyS0 as EC2's serial console
// expects, the loader boots under UEFI (boot mode uefi-preferred) and BIOS, and the drivers for
// Nitro's NVMe disks and ENA NICs ship as modules that PID 1 loads by modalias.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { guidFrom } from '../../init/disk/gpt.ts';
import type { OutputFormat } from './format.ts';

/**
 * qemu-img writes a random content id (CID=xxxxxxxx) into the VMDK's descriptor; it becomes one
 * derived from the seed, so that the same disk gives the same file.
 */
export function fixVmdkCid(file: string, seed: string): void {
  const fd = openSync(file, 'r+');
  try {
    const head = Buffer.alloc(64 * 1024);
    const n = readSync(fd, head, 0, head.length, 0);
    // %x, not zero-padded: the new id takes as many digits, so that the descriptor keeps its length.
    const m = /\nCID=([0-9a-f]{1,8})\n/.exec(head.subarray(0, n).toString('latin1'));
    if (!m) throw new Error(`${file}: no CID= line in the VMDK descriptor`);
    const cid = Buffer.from(guidFrom(`${seed}/vmdk-cid`).slice(0, m[1]!.length).toLowerCase(), 'latin1');
    writeSync(fd, cid, 0, cid.length, m.index + '\nCID='.length);
  } finally { closeSync(fd); }
}

export const aws: OutputFormat = {
  name: 'aws',
  summary: 'Amazon EC2: the raw disk and a stream-optimized VMDK, for import-snapshot (docs/aws.md)',
  build(ctx) {
    const raw = ctx.raw();
    const vmdk = join(ctx.outDir, 'appliance-aws.vmdk');
    execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'vmdk', '-o', 'subformat=streamOptimized', raw.file, vmdk],
      { stdio: 'pipe' });
    fixVmdkCid(vmdk, ctx.seed);
    return [raw.file, vmdk];
  },
};
