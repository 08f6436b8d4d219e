// aws: what EC2 imports (docs/aws.md): the raw disk, and the same disk as a stream-optimized
// VMDK (smaller to upload; `aws ec2 import-snapshot` takes either). The disk is the same as
// for bare metal: its command line already sends the console to ttyS0 as EC2's serial console
// expects, the loader boots under UEFI (boot mode uefi-preferred) and BIOS, the driver for Nitro's NVMe
// disks is built in (stage0 reads the system image from SYSTEM-A) and ENA's ships as a module that PID 1
// loads by modalias.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { guidFrom } from '../../machinery/disk/gpt.ts';
import type { OutputFormat } from './format.ts';

/**
 * qemu-img writes a random content id (CID=, printed with %x: one to eight hex digits) into the VMDK's
 * descriptor; it becomes eight digits derived from the seed, so that the same disk gives the same file
 * whatever the random id's length was. The descriptor is text in a fixed region the sparse header names
 * (its offset and size in sectors); it is rewritten whole, padded with zeros as qemu-img pads it.
 */
export function fixVmdkCid(file: string, seed: string): void {
  const fd = openSync(file, 'r+');
  try {
    const header = Buffer.alloc(512);
    readSync(fd, header, 0, 512, 0);
    if (header.toString('latin1', 0, 4) !== 'KDMV') throw new Error(`${file}: not a sparse VMDK (no KDMV header)`);
    const offset = Number(header.readBigUInt64LE(28)) * 512;
    const region = Buffer.alloc(Number(header.readBigUInt64LE(36)) * 512);
    readSync(fd, region, 0, region.length, offset);
    const end = region.indexOf(0);
    const text = region.toString('latin1', 0, end < 0 ? region.length : end);
    if (!/^CID=[0-9a-f]{1,8}$/m.test(text)) throw new Error(`${file}: no CID= line in the VMDK descriptor`);
    const cid = guidFrom(`${seed}/vmdk-cid`).slice(0, 8).toLowerCase();
    const fixed = Buffer.from(text.replace(/^CID=[0-9a-f]{1,8}$/m, `CID=${cid}`), 'latin1');
    if (fixed.length > region.length) throw new Error(`${file}: the descriptor outgrows its ${region.length} bytes`);
    const out = Buffer.alloc(region.length);
    fixed.copy(out);
    writeSync(fd, out, 0, out.length, offset);
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
