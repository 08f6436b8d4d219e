// pxe: network boot. The kernel, the initramfs and an iPXE script that loads both with the
// image's command line, side by side in pxe/, so that a TFTP or HTTP server serving that
// folder boots machines: the script names the other two relatively, and iPXE resolves them
// against the URL it fetched the script from (tftp://server/boot.ipxe, http://server/pxe/boot.ipxe).
// The install payload (install/) lies beside them, for a machine booted this way to install itself.
import { copyFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTALL_DIR } from '../disk/install-payload.ts';
import { liveCmdline } from '../../machinery/disk/labels.ts';
import type { OutputFormat } from './format.ts';

export const PXE_KERNEL = 'vmlinuz';
export const PXE_INITRAMFS = 'initramfs.cpio.zst';
export const PXE_SCRIPT = 'boot.ipxe';

/**
 * The script. `initrd=` names the initramfs for the kernel's EFI stub under UEFI iPXE (a
 * BIOS boot ignores it); no other word of the command line is iPXE's business.
 */
export function ipxeScript(cmdline: string): string {
  return [
    '#!ipxe',
    '# The appliance over the network: kernel and initramfs from beside this script.',
    `kernel ${PXE_KERNEL} initrd=${PXE_INITRAMFS} ${cmdline.trim()}`.trimEnd(),
    `initrd ${PXE_INITRAMFS}`,
    'boot',
    '',
  ].join('\n');
}

export const pxe: OutputFormat = {
  name: 'pxe',
  summary: 'network boot: kernel, initramfs, iPXE script, install payload (serve pxe/ over TFTP or HTTP)',
  async build(ctx) {
    const dir = join(ctx.outDir, 'pxe');
    mkdirSync(join(dir, INSTALL_DIR), { recursive: true });
    const files = [join(dir, PXE_SCRIPT), join(dir, PXE_KERNEL), join(dir, PXE_INITRAMFS)];
    writeFileSync(files[0]!, ipxeScript(liveCmdline(ctx.inputs.cmdline)));
    copyFileSync(ctx.inputs.kernel, files[1]!);
    copyFileSync(await ctx.liveInitramfs(), files[2]!);
    const payload = await ctx.installPayload();
    for (const f of payload.files) {
      const to = join(dir, INSTALL_DIR, f.name);
      copyFileSync(f.path, to);
      files.push(to);
    }
    // Fixed times, like every other artifact: a server's Last-Modified says nothing of the build.
    for (const f of files) utimesSync(f, ctx.epoch, ctx.epoch);
    return files;
  },
};
