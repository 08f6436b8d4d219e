// The boot partition read as the machine reads it at every start: a grubenv GRUB cannot read (garbage) or an upgrade
// record that is not JSON is reported with the slots, never thrown into a boot that then reboots forever; the next
// change of the slots writes a block GRUB's own grub-editenv reads.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BootPartition } from './boot-partition.ts';
import { versionSpecs } from './versions.ts';
import { GRUBENV_PATH, markGood } from '../../machinery/disk/boot-slots.ts';
import { encodeGrubEnv } from '../../machinery/disk/grubenv.ts';
import { encodePayload, extensionFile, PAYLOAD_INDEX } from '../../machinery/disk/slot-payload.ts';
import { partsProblem } from './upgrader.ts';

function partition(grubenv: Buffer): { dir: string; boot: BootPartition } {
  const dir = mkdtempSync(join(tmpdir(), 'boot-partition-'));
  mkdirSync(join(dir, 'boot', 'grub'), { recursive: true });
  writeFileSync(join(dir, GRUBENV_PATH), grubenv);
  return { dir, boot: new BootPartition(dir, 'A') };
}

t.test('a grubenv of garbage: read as GRUB reads it (slot A), its problem on every slot, written anew', async (t) => {
  const { dir, boot } = partition(Buffer.alloc(1024, 0xa5));
  t.same(boot.loader(), { defaultSlot: 'A', triesLeft: 0, good: new Set(['A']) });
  t.match(boot.loaderProblem(), /grubenv is unreadable \(no "# GRUB Environment Block" signature\): GRUB ignores it/);
  const specs = versionSpecs(boot);
  t.match(specs.get('A'), { running: true, defaultBoot: true, problem: /grubenv is unreadable/ });
  t.match(specs.get('B'), { problem: /^holds no system; the boot loader's environment .* is unreadable/ });
  boot.setLoader(markGood(boot.loader(), 'A'));
  t.equal(boot.loaderProblem(), undefined, 'a fresh block replaced it');
  const listed = execFileSync('grub-editenv', [join(dir, GRUBENV_PATH), 'list'], { encoding: 'utf8' });
  t.match(listed, /^default_slot=A\ngood_slots=A\n$/, 'GRUB\'s own tool reads it');
});

t.test('an upgrade record that is not JSON: reported with the slots; record() still refuses it', async (t) => {
  const { dir, boot } = partition(encodeGrubEnv({ default_slot: 'A', good_slots: 'A' }));
  writeFileSync(join(dir, 'upgrade.json'), '{"id": "half-writ');
  t.match(boot.readRecord(), { problem: /upgrade\.json: not an upgrade record/ });
  t.throws(() => boot.record(), /not an upgrade record/);
  t.match(versionSpecs(boot).get('A'), { problem: /upgrade\.json: not an upgrade record/ });
});

t.test('a slot with an appliance\'s payload: written with it, whole only while every file its index names is there',
  async (t) => {
    const { dir, boot } = partition(encodeGrubEnv({}));
    const staged = mkdtempSync(join(tmpdir(), 'staged-'));
    const file = (name: string, data: string | Buffer) => {
      writeFileSync(join(staged, name), data);
      return join(staged, name);
    };
    const index = encodePayload({ name: 'kiosk', version: '2', config: false,
      extensions: [{ name: 'web', sha256: 'a'.repeat(64), bytes: 3 }] });
    let bytes = 0;
    boot.clearSlot('B'); // as the upgrader does first
    await boot.fillSlot('B', {
      kernel: file('k', 'kernel'), initramfs: file('i', 'initramfs'),
      extras: [{ name: PAYLOAD_INDEX, path: file('x', index) }, { name: extensionFile('web'), path: file('w', 'web') }],
    }, { cmdline: 'console=ttyS0', version: '2', commit: 'c' }, (n) => {
      bytes += n;
    });
    t.same(readdirSync(join(dir, 'B')).sort(),
      ['appliance.json', 'extension-web.squashfs', 'initramfs.cpio.zst', 'slot.env', 'vmlinuz']);
    t.equal(bytes, 6 + 9 + index.length + 3, 'every file counted as written');
    t.equal(boot.slot('B')?.version, '2', 'whole');
    rmSync(join(dir, 'B', extensionFile('web')));
    t.equal(boot.slot('B'), undefined, 'an extension its index names is missing: not whole');
    writeFileSync(join(dir, 'B', extensionFile('web')), 'web');
    writeFileSync(join(dir, 'B', PAYLOAD_INDEX), '{');
    t.equal(boot.slot('B'), undefined, 'an index that cannot be read: not whole');
    boot.clearSlot('B');
    t.same(readdirSync(join(dir, 'B')), [], 'cleared: the payload goes with the rest');
  });

t.test('a bundle\'s parts: the system\'s two, the disk form\'s two or none, and a payload only with its index',
  async (t) => {
  t.equal(partsProblem(['vmlinuz', 'initramfs.cpio.zst']), undefined);
  t.equal(partsProblem(['vmlinuz', 'initramfs.cpio.zst', 'initramfs-disk.cpio.zst', 'system.squashfs.zst']),
    undefined);
  t.match(partsProblem(['vmlinuz', 'initramfs.cpio.zst', 'initramfs-disk.cpio.zst']),
    /: the disk form's initramfs-disk\.cpio\.zst without its other part; /);
  t.match(partsProblem(['vmlinuz', 'initramfs-disk.cpio.zst', 'system.squashfs.zst']), /^parts /,
    'the disk form alone: a disk without SYSTEM partitions could not take it');
  t.equal(partsProblem(['vmlinuz', 'initramfs.cpio.zst', 'appliance.json', 'config.yaml', 'extension-web.squashfs']),
    undefined);
  t.match(partsProblem(['vmlinuz']),
    /^parts vmlinuz; a bundle carries vmlinuz and initramfs\.cpio\.zst, optionally the disk form's /);
  t.match(partsProblem(['vmlinuz', 'initramfs.cpio.zst', '../etc/passwd']), /^parts \.\.\/etc\/passwd, /);
  t.match(partsProblem(['vmlinuz', 'initramfs.cpio.zst', 'vmlinuz']), /^parts /, 'a part twice');
  t.equal(partsProblem(['vmlinuz', 'initramfs.cpio.zst', 'extension-web.squashfs']),
    'parts extension-web.squashfs, initramfs.cpio.zst, vmlinuz: a payload without its appliance.json');
});
