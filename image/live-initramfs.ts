// live-initramfs: the initramfs of an image that has no boot slots (ISO, PXE), carrying the appliance's payload
// (machinery/disk/slot-payload.ts) under /appliance. The kernel unpacks concatenated archives, each compressed on
// its own, one after another into one root: the build's initramfs is taken as it is and a second archive holding
// the payload is appended, so nothing of the system is packed again. Its bytes stay in RAM for the machine's life.
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INITRAMFS_PAYLOAD_DIR } from '../machinery/disk/slot-payload.ts';
import { sortEntries, type CpioEntry } from './cpio.ts';
import { writeCompressed } from './initramfs.ts';

export interface LiveInitramfs {
  file: string;
  /** What the payload added, compressed (what the loader reads) and unpacked (what RAM holds). */
  addedBytes: number;
  unpackedBytes: number;
}

/** `base` with the files of `payloadDir` appended under INITRAMFS_PAYLOAD_DIR, written to `out`. */
export async function liveInitramfs(
  base: string, payloadDir: string, out: string, mtime: number,
): Promise<LiveInitramfs> {
  const t = { mtime, uid: 0, gid: 0 };
  const dir = INITRAMFS_PAYLOAD_DIR.slice(1);
  const entries: CpioEntry[] = [{ type: 'dir', path: dir, mode: 0o755, ...t }];
  let unpackedBytes = 0;
  for (const name of readdirSync(payloadDir).sort()) {
    const data = readFileSync(join(payloadDir, name));
    unpackedBytes += data.length;
    entries.push({ type: 'file', path: `${dir}/${name}`, mode: 0o444, data, ...t });
  }
  const appended = `${out}.payload`;
  await writeCompressed(sortEntries(entries), appended);
  try {
    copyFileSync(base, out);
    writeFileSync(out, readFileSync(appended), { flag: 'a' });
    return { file: out, addedBytes: statSync(appended).size, unpackedBytes };
  } finally {
    rmSync(appended, { force: true });
  }
}
