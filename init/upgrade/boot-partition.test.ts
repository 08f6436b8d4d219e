// The boot partition read as the machine reads it at every start: a grubenv GRUB cannot read (garbage) or an upgrade
// record that is not JSON is reported with the slots, never thrown into a boot that then reboots forever; the next
// change of the slots writes a block GRUB's own grub-editenv reads.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BootPartition } from './boot-partition.ts';
import { versionSpecs } from './versions.ts';
import { GRUBENV_PATH, markGood } from '../../machinery/disk/boot-slots.ts';
import { encodeGrubEnv } from '../../machinery/disk/grubenv.ts';

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
