// image-builds: the disk and cloud images the image tests boot, built (about 6 s) by each test file
// from the built kernel and initramfs, signed with a key made for the run.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { buildImages } from '../image/images.ts';
import { FORMATS } from '../image/formats/index.ts';
import { artifacts } from './artifacts.ts';

export async function buildTestImages(tag: string) {
  const a = artifacts();
  const dir = mkdtempSync(join(tmpdir(), `${tag}-`));
  // Two builds of every format: about 1.4 GB a file, so it goes as soon as the file's tests end.
  tap.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const signingKey = { privateKey: generateKeyPairSync('ed25519').privateKey, description: 'the test key' };
  const build = (out: string, seed = 'images-test') => buildImages({
    formats: FORMATS, inputs: { kernel: a.kernel, initramfs: a.initrd, cmdline: a.cmdline, diskForm: a.disk },
    release: { version: '0.0.0-test', commit: 'test' }, signingKey: () => signingKey,
    outDir: join(dir, out), seed, epoch: 0, progress: () => {},
  });
  const first = await build('first');
  /** The file of a format in the first build. */
  const fileOf = (format: string) => join(dir, 'first', first.find((x) => x.format === format)!.file);
  return { a, dir, build, first, fileOf, signingKey };
}

/** The raw disk image alone, from the built kernel and initramfs, signed with a key made for the call: its path. */
export async function buildRawImage(dir: string, seed: string): Promise<string> {
  const a = artifacts();
  mkdirSync(join(dir, 'images'), { recursive: true });
  const built = await buildImages({
    formats: FORMATS.filter((f) => f.name === 'raw'),
    inputs: { kernel: a.kernel, initramfs: a.initrd, cmdline: a.cmdline, diskForm: a.disk },
    release: { version: '0.0.0-test', commit: 'test' },
    signingKey: () => ({ privateKey: generateKeyPairSync('ed25519').privateKey, description: 'the test key' }),
    outDir: join(dir, 'images'), seed, epoch: 0, progress: () => {},
  });
  return join(dir, 'images', built.find((x) => x.format === 'raw')!.file);
}

/** The partition table as sfdisk reads it. */
export interface SfdiskTable {
  label: string; lastlba: number; partitions: { start: number; size: number; type: string; name: string }[];
}
export const partitionTable = (file: string) => (JSON.parse(
  execFileSync('sfdisk', ['--json', file], { encoding: 'utf8' }),
) as { partitiontable: SfdiskTable }).partitiontable;
