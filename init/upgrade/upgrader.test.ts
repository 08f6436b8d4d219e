// The upgrader on a real boot partition in a temporary directory, fed as the update poller feeds it (upgradeFrom, a
// bundle read from a file): a version below the running one is refused unless a downgrade is asked for, naming
// both; a higher one is written to the other slot, the loader told to try it, the machine rebooted.
import t from 'tap';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { createLogger } from '../../machinery/log.ts';
import { GRUBENV_PATH } from '../../machinery/disk/boot-slots.ts';
import { encodeGrubEnv } from '../../machinery/disk/grubenv.ts';
import { encodeUpgradeBundle } from '../../machinery/disk/upgrade-bundle.ts';
import type { UpgradeStatusSpec } from '../../proto/gen/spec-types.ts';
import { CONFIG_NS, RUNTIME_NS, UPGRADE_POLICY_TYPE, UPGRADE_STATUS_TYPE } from '../../proto/gen/resource-types.ts';
import { BootPartition } from './boot-partition.ts';
import { startUpgrader } from './upgrader.ts';

const dir = mkdtempSync(join(tmpdir(), 'upgrader-'));
mkdirSync(join(dir, 'esp', 'boot', 'grub'), { recursive: true });
writeFileSync(join(dir, 'esp', GRUBENV_PATH), encodeGrubEnv({ default_slot: 'A', good_slots: 'A' }));
const boot = new BootPartition(join(dir, 'esp'), 'A');
const file = (name: string, data: string | Buffer) => {
  writeFileSync(join(dir, name), data);
  return join(dir, name);
};
boot.clearSlot('A');
await boot.fillSlot('A', { kernel: file('k', 'kernel'), initramfs: file('i', 'initramfs'), extras: [] },
  { cmdline: 'console=ttyS0', version: '2.0.0', commit: 'a' }, () => {});

const key = generateKeyPairSync('ed25519').privateKey;
const bundle = (version: string) => file(`${version}.tar`, encodeUpgradeBundle({ version, commit: 'c',
  cmdline: 'console=ttyS0', mtime: 0, privateKey: key,
  parts: [{ name: 'vmlinuz', data: Buffer.from(`kernel ${version}`) },
    { name: 'initramfs.cpio.zst', data: Buffer.from(`initramfs ${version}`) }] }));

const state = new MemoryState();
await state.create(newResource({ namespace: CONFIG_NS, type: UPGRADE_POLICY_TYPE, id: 'test' },
  { trustedKeys: [createPublicKey(key).export({ type: 'spki', format: 'pem' })], minVersion: '' }));
const reboots: string[] = [];
const upgrader = await startUpgrader({
  state, log: createLogger('test'), owner: 'engine', slotsChanged: async () => {},
  machine: { boot, stagingDir: join(dir, 'staging'), reboot: (why) => reboots.push(why) },
});
t.teardown(() => upgrader.close());
const statusOf = (id: string) =>
  state.findSync({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id })?.spec as UpgradeStatusSpec | undefined;
const spec = { reboot: true, tries: 1, healthTimeoutSeconds: 0, allowDowngrade: false, source: 'test' };

t.test('a version below the running one: refused, naming both, nothing written', async (t) => {
  t.equal(upgrader.runningVersion(), '2.0.0', 'the running slot\'s version');
  await upgrader.upgradeFrom('down', spec, async () => createReadStream(bundle('1.5.0')));
  t.match(statusOf('down'), { phase: 'failed',
    error: 'version 1.5.0 is below the running 2.0.0: refused (a downgrade is asked for: cosictl upgrade '
      + '--allow-downgrade)' });
  t.equal(boot.slot('B'), undefined, 'slot B untouched');
  t.same(reboots, []);
});

t.test('asked for, the downgrade is written; a higher version needs no asking', async (t) => {
  await upgrader.upgradeFrom('down-asked', { ...spec, allowDowngrade: true },
    async () => createReadStream(bundle('1.5.0')));
  await waitFor(() => statusOf('down-asked')?.phase === 'staged');
  t.equal(boot.slot('B')?.version, '1.5.0');
  t.match(boot.loader(), { trySlot: 'B' });
  t.match(reboots, [/upgrade "down-asked" to 1\.5\.0 in slot B/]);
});

async function waitFor(ok: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
