// A/B upgrade through the API, on the installed disk under OVMF, with real builds of other versions
// (npm run build -- --variant): bundles signed by another key, altered, cut short or below the policy's
// minimum are refused and leave slot B empty; a good bundle is uploaded, written to slot B, tried, and
// marks itself good; rollback boots A again; a build whose PID 1 exits, and one whose network plugin
// crash-loops, are each tried once and left for A by GRUB's boot counting, and A reports why; QEMU
// killed while slot B is being written leaves A booting, and A says which upgrade was cut. The loader
// and grubenv are the same under SeaBIOS (images.test.ts counts GRUB's tries under both firmwares);
// SeaBIOS runs the first upgrade too.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_RE } from '../init/boot/ready-line.ts';
import { encodeUpgradeBundle } from '../machinery/disk/upgrade-bundle.ts';
import { buildImages } from '../image/images.ts';
import { FORMATS } from '../image/formats/index.ts';
import { developmentSigningKey } from '../image/signing-key.ts';
import { bootWithApi, type ApiVm } from './api-vm.ts';
import { artifacts } from './artifacts.ts';

const a = artifacts();
const dir = mkdtempSync(join(tmpdir(), 'upgrade-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const manifest = JSON.parse(readFileSync(join(a.dir, 'manifest.json'), 'utf8')) as { version: string; commit: string };
// The key the built system trusts (npm run build signs with the development key unless told otherwise).
const key = developmentSigningKey(join(a.dir, 'dev', 'upgrade-signing-key.pem'));

/** A real build of another version (its own SEA and initramfs), as a signed bundle. */
function variant(name: string, version: string, testBreak?: string, privateKey = key.privateKey): string {
  const out = join(dir, name);
  execFileSync('npx', ['tsx', join(a.dir, '..', 'scripts', 'build.ts'), '--variant', out, '--version', version,
    ...(testBreak ? ['--test-break', testBreak] : [])], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bundle = join(dir, `${name}.tar`);
  writeFileSync(bundle, encodeUpgradeBundle({
    version, commit: manifest.commit, cmdline: a.cmdline, privateKey, mtime: 0,
    parts: [
      { name: 'vmlinuz', data: readFileSync(join(out, 'vmlinuz')) },
      { name: 'initramfs.cpio.zst', data: readFileSync(join(out, 'initramfs.cpio.zst')) },
    ],
  }));
  return bundle;
}

const good = variant('good', '0.9.0');
const initExits = variant('init-exits', '0.9.1', 'init-exit');
const networkCrashes = variant('network-crashes', '0.9.2', 'plugin-crash:network');
const otherKey = variant('other-key', '0.9.0', undefined, generateKeyPairSync('ed25519').privateKey);
const tampered = join(dir, 'tampered.tar');
const bytes = readFileSync(good);
bytes[bytes.length - 4096]! ^= 1; // inside the initramfs, the last part
writeFileSync(tampered, bytes);
const truncated = join(dir, 'truncated.tar');
writeFileSync(truncated, readFileSync(good).subarray(0, 5_000_000));

// Slot A stops half-way through writing the upgrade named "cut" (and no other): its power is cut there (QMP quit).
const images = await buildImages({
  formats: FORMATS.filter((f) => f.name === 'raw'),
  inputs: {
    kernel: a.kernel, initramfs: a.initrd, cmdline: `${a.cmdline} appliance.test.pause=upgrade-slot-write/cut`,
  },
  release: manifest, signingKey: () => key, outDir: join(dir, 'images'), seed: 'upgrade-test', epoch: 0,
  progress: () => {},
});
const rawFile = join(dir, 'images', images[0]!.file);

/** Waits for the `n`-th ready line on the console, then for the API. */
async function readyAgain(m: ApiVm, n: number, ms = 300_000): Promise<void> {
  await m.vm.waitFor(READY_RE, ms, n);
  await m.poll(['get', 'versions'], /Version/, 60_000);
}
interface VersionDoc {
  metadata: { id: string }; spec: { version: string; running: boolean; defaultBoot: boolean; good: boolean };
}
/** The Versions; a machine still starting its plugins may be slow to answer once, so it is asked until it does. */
const versions = async (m: ApiVm) => {
  const r = await m.poll(['get', 'versions', '-o', 'json'], /"items"/, 60_000);
  if (r.code !== 0) throw new Error(`cosictl get versions: exit ${r.code}: ${r.err.trim()}`);
  return (JSON.parse(r.out) as { items: VersionDoc[] }).items;
};
const slotLine = async (m: ApiVm) => (await versions(m)).map((v) => `${v.metadata.id}:${v.spec.version || '-'}`
  + `${v.spec.running ? ' running' : ''}${v.spec.defaultBoot ? ' default' : ''}${v.spec.good ? ' good' : ''}`)
  .join(' | ');
/** Why an upgrade failed, as its UpgradeStatus says (JSON: YAML folds a long message over lines). */
const upgradeError = async (m: ApiVm, id: string) => (JSON.parse(
  (await m.run(['get', 'upgradestatus', id, '-o', 'json'])).out,
) as { spec: { error: string } }).spec.error;
const upgrade = (m: ApiVm, ...args: string[]) => m.run(['upgrade', ...args], undefined, 300_000);

const only = process.env.UPGRADE_TEST_FIRMWARE;
for (const [firmware, memoryMiB, full] of [['ovmf', 320, true], ['seabios', 256, false]] as const) {
  if (only && only !== firmware) continue;
  t.test(`${firmware}: refusals write nothing; A -> B upgrade; ${full ? 'rollback; broken builds fall back; '
    + 'a power cut while writing leaves A' : 'the same upgrade under legacy BIOS'}`, async (t) => {
    const disk = join(dir, `disk-${firmware}.raw`);
    execFileSync('cp', ['--sparse=always', rawFile, disk]);
    execFileSync('truncate', ['-s', '1G', disk]); // EPHEMERAL grows: room on /var to stage a bundle
    let m = await bootWithApi({ bootFrom: 'disk', firmware, memoryMiB, noReboot: false,
      disks: [{ file: disk, format: 'raw' }] }, 'dhcp');
    t.teardown(() => m.vm.kill());
    // The console says what a failed step's machine did: kept beside the run's other files.
    t.teardown(() => writeFileSync(join(dir, `console-${firmware}.log`), m.vm.console()));
    t.equal(await slotLine(m), `A:${manifest.version} running default good | B:-`, 'a fresh disk: A, B empty');

    if (full) {
      for (const [what, file, re] of [
        ['another key', otherKey, /signature does not verify with key sha256:\w+ \(the manifest names sha256:/],
        ['an altered part', tampered, /initramfs\.cpio\.zst: sha256 \w+, the manifest says \w+/],
        ['a file cut short', truncated, /the machine wants more than its 5000000 bytes|truncated/],
      ] as const) {
        const r = await upgrade(m, '--image', file);
        t.equal(r.code, 1, `${what}: refused`);
        t.match(r.err, re, `${what}: ${r.err.trim().split('\n').at(-1)}`);
      }
      const policy = await m.run(['apply', '-f', '-'], 'metadata: {type: upgradepolicy, id: strict}\n'
        + 'spec: {minVersion: 1.0.0}\n');
      t.equal(policy.code, 0, `a policy: nothing below 1.0.0 ${policy.err}`);
      const low = await upgrade(m, '--image', good);
      t.match(low.err, /version 0\.9\.0 is below the minimum 1\.0\.0 \(UpgradePolicy\): refused/, 'below the minimum');
      t.equal((await m.run(['delete', 'upgradepolicies', 'strict'])).code, 0);
      t.equal(await slotLine(m), `A:${manifest.version} running default good | B:-`, 'slot B is still empty');
    }

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
    if (!full) return;

    const back = await m.run(['rollback']);
    t.equal(back.code, 0, back.err);
    t.match(back.out, new RegExp(`slot A \\(${manifest.version.replace(/\./g, '\\.')}\\) is the default`));
    await readyAgain(m, 3);
    t.equal(await slotLine(m), `A:${manifest.version} running default good | B:0.9.0 good`, 'rolled back to A');

    // PID 1 of the new build exits: the kernel panics and reboots; GRUB's one try is spent, A boots.
    const broken = await upgrade(m, '--image', initExits, '--id', 'to-init-exits');
    t.equal(broken.code, 0, broken.err);
    await readyAgain(m, 4);
    t.match(m.vm.console(), /test-break init-exit/, 'B\'s PID 1 exited');
    const status = await m.poll(['get', 'upgradestatus', 'to-init-exits'], /failed/, 60_000);
    t.match(status.out, /failed/, status.err);
    t.match(await upgradeError(m, 'to-init-exits'),
      /slot B \(version 0\.9\.1\) did not come up healthy: it never reported back/, 'A says which version, and why');
    t.equal(await slotLine(m), `A:${manifest.version} running default good | B:0.9.1`, 'B is not good');

    // The network plugin of the new build crash-loops: health fails, the system reboots itself.
    const crash = await upgrade(m, '--image', networkCrashes, '--id', 'to-network-crashes', '--health-timeout', '40s');
    t.equal(crash.code, 0, crash.err);
    await readyAgain(m, 6); // B's ready line, then A's
    // Between two of its crashes the plugin may be starting again: either way it never ran.
    const crashing = 'plugins: network is (backoff|starting) \\(\\d+ restarts, last exit code 1\\)';
    t.match(m.vm.console(), new RegExp(`not healthy after 40 s: ${crashing}`));
    t.match(await upgradeError(m, 'to-network-crashes'),
      new RegExp(`its health checks did not pass: after 40 s: ${crashing}`), 'A says which checks failed');

    // The power cut while slot B is half written (its kernel copied, the rest not): the loader was not told to try
    // it, so A boots, and says which upgrade the machine stopped in.
    const cut = m.run(['upgrade', '--image', good, '--no-reboot', '--id', 'cut'], undefined, 300_000);
    await m.vm.waitFor(/APPLIANCE TEST PAUSE upgrade-slot-write\/cut/, 240_000);
    await (await m.vm.qmp()).execute('quit').catch(() => undefined); // QEMU may close QMP before it answers
    await cut;
    m = await bootWithApi({ bootFrom: 'disk', firmware, memoryMiB, noReboot: false,
      disks: [{ file: disk, format: 'raw' }] }, 'dhcp');
    t.teardown(() => m.vm.kill());
    t.match(m.vm.console(), /appliance: booting slot A/);
    t.match(await slotLine(m), new RegExp(`^A:${manifest.version.replace(/\./g, '\\.')} running default good \\| B:`),
      'A boots after the power cut');
    // The trial publishes it as the engine starts: shortly after the API answers. (Under OVMF the record was once
    // found empty here: FAT's rename, see atomic-write.ts.)
    await m.poll(['get', 'upgradestatus', 'cut'], /failed/, 60_000);
    t.match(await upgradeError(m, 'cut'), new RegExp('the machine stopped while slot B was being written \\(version '
      + '0\\.9\\.0; a power cut\\?\\): the boot loader was never told to try it, and slot A booted as before'),
    'and says which upgrade');
  });
}
