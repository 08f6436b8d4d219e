// build-floor: compiles static-init.c and packs it as the only file of an initramfs.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sortEntries, type CpioEntry } from '../../image/cpio.ts';
import { writeCompressed } from '../../image/initramfs.ts';
import { compileStaticC } from '../../image/stage0/build-stage0.ts';

export async function buildFloorInitramfs(outDir: string): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const exe = join(outDir, 'static-init');
  compileStaticC(fileURLToPath(new URL('static-init.c', import.meta.url)), exe);
  const entries: CpioEntry[] = [
    { type: 'dir', path: 'dev', mode: 0o755 },
    { type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1 },
    { type: 'file', path: 'init', mode: 0o755, data: readFileSync(exe) },
  ];
  const out = join(outDir, 'static-initramfs.cpio.zst');
  await writeCompressed(sortEntries(entries), out, 19);
  return out;
}
