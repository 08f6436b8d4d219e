// raw: the GPT disk itself (image/disk/raw.ts), for `dd` to bare metal or QEMU.
import type { OutputFormat } from './format.ts';

export const raw: OutputFormat = {
  name: 'raw',
  summary: 'GPT disk image booting under UEFI and BIOS (dd it to a disk, or boot it in QEMU)',
  build: (ctx) => [ctx.raw().file],
};
