// upgrade-setup: what the upgrade tests share (qemu/upgrade.test.ts, qemu/fleet.test.ts): real builds of other
// versions as signed bundles, the raw image they start from, and the first upgrade. Importing it builds them.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { DISK_FORM_PARTS, SLOT_FILES } from '../machinery/disk/boot-slots.ts';
import { encodeUpgradeBundle } from '../machinery/disk/upgrade-bundle.ts';
import { DISK_INITRAMFS, DISK_SYSTEM_IMAGE_ZST } from '../image/system-image.ts';
import { buildImages } from '../image/images.ts';
import { FORMATS } from '../image/formats/index.ts';
import { developmentSigningKey } from '../image/signing-key.ts';
import { bootWithApi, type ApiVm } from './api-vm.ts';
import { artifacts } from './artifacts.ts';
import type { VmOptions } from './launch.ts';
import { readyAgain, slotLine, upgrade } from './upgrade-steps.ts';

export const a = artifacts();
export const dir = mkdtempSync(join(tmpdir(), 'upgrade-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
export const manifest = JSON.parse(readFileSync(join(a.dir, 'manifest.json'), 'utf8')) as {
  version: string; commit: string;
};
// The key the built system trusts (npm run build signs with the development key unless told otherwise).
const key = developmentSigningKey(join(a.dir, 'dev', 'upgrade-signing-key.pem'));

/**
 * Where builds of other versions are kept: the run's scratch folder when scripts/test.ts runs the files (one build per
 * version and break for the whole run: upgrade.test and fleet.test need the same ones), else this file's own folder.
 */
const builds = process.env.APPLIANCE_TEST_SCRATCH ? join(process.env.APPLIANCE_TEST_SCRATCH, 'variant-builds')
  : join(dir, 'variant-builds');

/** A real build of another version (its own SEA and initramfs), made once: aside, then renamed in whole. */
function variantBuild(version: string, testBreak?: string): string {
  const out = join(builds, testBreak ? `${version}-${testBreak.replace(/[^\w.-]/g, '_')}` : version);
  if (existsSync(out)) return out;
  mkdirSync(builds, { recursive: true });
  const partial = mkdtempSync(`${out}.partial-`);
  execFileSync('npx', ['tsx', join(a.dir, '..', 'scripts', 'build.ts'), '--variant', partial, '--version', version,
    ...(testBreak ? ['--test-break', testBreak] : [])], { stdio: ['ignore', 'ignore', 'inherit'] });
  // The disk form's parts kept; its SEA and system image are in the initramfs and the compressed image now.
  renameSync(join(partial, 'build', DISK_INITRAMFS), join(partial, DISK_FORM_PARTS.initramfs));
  renameSync(join(partial, 'build', DISK_SYSTEM_IMAGE_ZST), join(partial, DISK_FORM_PARTS.image));
  rmSync(join(partial, 'build'), { recursive: true, force: true });
  try {
    renameSync(partial, out);
  } catch (e) {
    // Another file made the same build meanwhile: theirs is as good.
    if ((e as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    rmSync(partial, { recursive: true, force: true });
  }
  return out;
}

/**
 * A real build of another version as a bundle signed by `privateKey` (the key the built system trusts), with its disk
 * form (as `npm run image -- --format upgrade` makes it) unless `selfContained` (as --format upgrade-self-contained).
 */
export function variant(name: string, version: string, testBreak?: string, privateKey: KeyObject = key.privateKey,
  selfContained = false) {
  const out = variantBuild(version, testBreak);
  const bundle = join(dir, `${name}.tar`);
  const part = (file: string) => ({ name: file, data: readFileSync(join(out, file)) });
  writeFileSync(bundle, encodeUpgradeBundle({
    version, commit: manifest.commit, cmdline: a.cmdline, privateKey, mtime: 0,
    parts: [part(SLOT_FILES.kernel), part(SLOT_FILES.initramfs),
      ...(selfContained ? [] : [part(DISK_FORM_PARTS.initramfs), part(DISK_FORM_PARTS.image)])],
  }));
  return bundle;
}

/** The good upgrade both firmwares make. */
export const good = variant('good', '0.9.0');

// Slot A stops half-way through writing SYSTEM-B for the upgrade named "cut" (and no other): its power is cut there.
const images = await buildImages({
  formats: FORMATS.filter((f) => f.name === 'raw'),
  inputs: {
    kernel: a.kernel, initramfs: a.initrd, cmdline: `${a.cmdline} appliance.test.pause=upgrade-system-write/cut`,
    diskForm: a.disk,
  },
  release: manifest, signingKey: () => key, outDir: join(dir, 'images'), seed: 'upgrade-test', epoch: 0,
  progress: () => {},
});
const rawFile = join(dir, 'images', images[0]!.file);

export type Firmware = 'ovmf' | 'seabios';

/** A fresh copy of the raw image, with room for EPHEMERAL to grow (where a bundle is staged on /var). */
export function freshDisk(firmware: Firmware, name: string = firmware): string {
  const disk = join(dir, `disk-${name}.raw`);
  execFileSync('cp', ['--sparse=always', rawFile, disk]);
  execFileSync('truncate', ['-s', '1G', disk]);
  return disk;
}

/** Boots `disk` the way both tests do, and keeps its console beside the run's other files for a failed step. */
export async function bootDisk(t: Test, disk: string, firmware: Firmware, memoryMiB: number,
  extra: Partial<VmOptions> = {}, name: string = firmware): Promise<ApiVm> {
  const m = await bootWithApi({ bootFrom: 'disk', firmware, memoryMiB, noReboot: false,
    disks: [{ file: disk, format: 'raw' }], ...extra }, 'dhcp');
  t.teardown(() => m.vm.kill());
  t.teardown(() => writeFileSync(join(dir, `console-${name}.log`), m.vm.console()));
  return m;
}

/** A -> B with the good bundle: written, booted, marked good by the new system; prints how long it took. */
export async function firstUpgrade(t: Test, m: ApiVm, firmware: Firmware): Promise<void> {
  const t0 = Date.now();
  const up = await upgrade(m, '--image', good, '--health-timeout', '2m', '--id', 'to-good');
  t.equal(up.code, 0, up.err);
  t.match(up.out, /0\.9\.0 written to slot B \([\d.]+ MB\); the machine reboots into it/);
  await readyAgain(m, 2);
  const done = await m.poll(['get', 'upgradestatus', 'to-good'], /done/, 120_000);
  t.match(done.out, /done\s+0\.1\.\d+\s+0\.9\.0\s+B/, 'the new system marked itself good');
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  process.stderr.write(`# ${firmware}: from the upgrade request to the new version healthy: ${seconds} s\n`);
  t.match(m.vm.console(), /appliance: booting slot B/);
  t.equal(await slotLine(m), `A:${manifest.version} good | B:0.9.0 running default good`, 'B runs: the default');
}
