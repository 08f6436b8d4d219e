// A disk that went wrong, booted for real from the raw image: a grubenv of garbage, a machine config cut short, a
// full EPHEMERAL (/var); then the same disk with STATE's superblock wiped. Each time the machine boots, serves its
// API (its CA comes from fw_cfg) and reports what it found through it; it never loops in its boot. The faults are
// made on the host, in the image's own partitions (loop devices, mtools), before each boot.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi, TEST_CA_DOCUMENT, type ApiVm } from './api-vm.ts';
import { buildRawImage, partitionTable } from './image-builds.ts';
import { CONFIG_FILE, formatSavedConfig } from '../machinery/config/saved-config.ts';
import { stateDisk } from './config-seeds.ts';

const SECTOR = 512;
const dir = mkdtempSync(join(tmpdir(), 'faults-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const disk = await buildRawImage(dir, 'faults-test');
const table = partitionTable(disk);
const part = (n: number) => ({ offset: table.partitions[n]!.start * SECTOR, size: table.partitions[n]!.size * SECTOR });
const [ESP, STATE, EPHEMERAL] = [part(1), part(2), part(3)];

/** Runs `fn` with a loop device over the partition's bytes of the image. */
function withLoop(p: { offset: number; size: number }, fn: (loop: string) => void): void {
  const loop = execFileSync('losetup', ['--find', '--show', '--offset', String(p.offset), '--sizelimit', String(p.size),
    disk], { encoding: 'utf8' }).trim();
  try {
    fn(loop);
  } finally { execFileSync('losetup', ['-d', loop]); }
}

/** Runs `fn` with the partition mounted on the host. */
function withMounted(p: { offset: number; size: number }, fn: (mnt: string) => void): void {
  withLoop(p, (loop) => {
    const mnt = mkdtempSync(join(dir, 'mnt-'));
    execFileSync('mount', [loop, mnt]);
    try {
      fn(mnt);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
}

/**
 * Fills the ext4 of the partition to its last block with e2fsprogs, not through a mount: EPHEMERAL has project quotas,
 * which a host kernel without QFMT_V2 refuses to mount read-write. A file of the free blocks' size, written by
 * debugfs (which stops when no block is left: the file's own extent blocks come out of the same free space).
 */
function fillExt4(p: { offset: number; size: number }): void {
  withLoop(p, (loop) => {
    const head = execFileSync('dumpe2fs', ['-h', loop], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(head)?.[1]);
    const bytes = field('Free blocks') * field('Block size');
    const filler = join(dir, 'filler');
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(1 << 20, 1); // written, not a hole: debugfs would keep a hole a hole
    try {
      for (let done = 0; done < bytes; done += chunk.length) {
        writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - done));
      }
    } finally {
      closeSync(fd);
    }
    execFileSync('debugfs', ['-w', '-R', `write ${filler} filler`, loop], { stdio: 'ignore' });
    rmSync(filler);
    const left = execFileSync('dumpe2fs', ['-h', loop], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const free = Number(/^Free blocks:\s+(\d+)$/m.exec(left)?.[1]);
    if (free > 16) throw new Error(`${loop}: ${free} blocks still free after the filler`);
  });
}

/** Each fault and what the boot after it reported through the API, printed when the file ends. */
const reported: { fault: string; said: string }[] = [];
t.teardown(() => {
  const lines = ['', '# faults: what the next boot reported', ...reported.map((r) => `${r.fault}: ${r.said}`), ''];
  process.stdout.write(lines.map((l) => `# ${l}`).join('\n') + '\n');
});
const said = (fault: string, text: unknown) => reported.push({ fault, said: String(text ?? '(nothing)') });

const json = async (m: ApiVm, args: string[], until: RegExp) =>
  JSON.parse((await m.poll([...args, '-o', 'json'], until, 120_000)).out || '{"items":[]}') as {
    items: { metadata: { id: string }; spec: Record<string, unknown> }[];
  };

await t.test('garbage grubenv, a config cut short, a full /var: it boots, serves and says each', async (t) => {
  // The grubenv GRUB and the machine read: 1 KiB of garbage. GRUB ignores it and boots A.
  const garbage = join(dir, 'grubenv');
  writeFileSync(garbage, Buffer.alloc(1024, 'x'));
  execFileSync('mcopy', ['-o', '-i', `${disk}@@${ESP.offset}`, garbage, '::/boot/grub/grubenv']);
  // A saved config whose last bytes are gone (it still parses as YAML, one resource short).
  const whole = formatSavedConfig({
    text: `${TEST_CA_DOCUMENT()}---\nmetadata: {type: motd, id: cut}\nspec: {text: "never whole"}\n`,
    source: 'api', savedAt: '2026-11-26T00:00:00Z',
  });
  withMounted(STATE, (mnt) => writeFileSync(join(mnt, CONFIG_FILE), whole.slice(0, whole.indexOf('---\nmetadata'))));
  // /var with no block left, reserved blocks included.
  fillExt4(EPHEMERAL);

  const m = await bootWithApi({ bootFrom: 'disk', disks: [{ file: disk, format: 'raw' }] }, 'dhcp');
  t.teardown(() => m.vm.kill());
  t.equal((await m.run(['get', 'versions'])).code, 0, 'the API answers');
  t.notMatch(m.vm.console(), /FATAL/, 'no FATAL: no boot loop');
  t.equal([...m.vm.console().matchAll(/appliance: booting slot/g)].length, 1, 'booted once');
  const versions = await json(m, ['get', 'versions'], /unreadable/);
  t.match(versions.items.find((v) => v.metadata.id === 'A')?.spec,
    { running: true, problem: /grubenv is unreadable \(no "# GRUB Environment Block" signature\): GRUB ignores it/ },
    'the slots say the loader\'s environment is unreadable');
  const config = await json(m, ['get', 'configstatus'], /bootProblem/);
  // Said for the whole boot, though the config from fw_cfg was applied (and saved) after it.
  t.match(config.items[0]?.spec, {
    bootProblem: new RegExp('machine-config\\.yaml: damaged: it holds \\d+ bytes of the \\d+ saved at .*kept as '
      + 'machine-config\\.yaml\\.damaged'),
  }, 'the config cut short: refused with why, kept aside');
  const ephemeral = await json(m, ['get', 'ephemeralstatus'], /spaceProblem/);
  t.match(ephemeral.items[0]?.spec, { spaceProblem: /^\/var is full: \d+ KiB left/ }, '/var is full, said');
  said('grubenv of garbage', versions.items.find((v) => v.metadata.id === 'A')?.spec.problem);
  said('config cut short', config.items[0]?.spec.bootProblem);
  said('/var full', ephemeral.items[0]?.spec.spaceProblem);
  t.ok((await m.vm.powerdown(60_000)).clean, 'powered off cleanly');
});

await t.test('STATE\'s superblock wiped: it boots on memory, and says which partition is damaged', async (t) => {
  const fd = openSync(disk, 'r+');
  try {
    writeSync(fd, Buffer.alloc(1024), 0, 1024, STATE.offset + 1024);
  } finally {
    closeSync(fd);
  }
  const m = await bootWithApi({ bootFrom: 'disk', disks: [{ file: disk, format: 'raw' }] }, 'dhcp');
  t.teardown(() => m.vm.kill());
  t.equal((await m.run(['get', 'versions'])).code, 0, 'the API answers');
  t.notMatch(m.vm.console(), /FATAL/);
  const config = await json(m, ['get', 'configstatus'], /partition named STATE/);
  t.match(JSON.stringify(config.items[0]?.spec), new RegExp('/dev/[sv]da3 is the partition named STATE, but holds no '
    + 'filesystem this system recognizes: its superblock damaged\\?'));
  said('STATE superblock wiped', config.items[0]?.spec.persistProblem);
});

await t.test('the power cut during a config save: the next boot has the whole old config, and says so', async (t) => {
  const motd = (id: string, text: string) => `metadata: {type: motd, id: ${id}}\nspec: {text: ${text}}\n`;
  const state = stateDisk(dir, 'state-cut', {
    text: `${TEST_CA_DOCUMENT()}---\n${motd('before', 'saved')}`, source: 'api', savedAt: '2026-11-26T00:00:00Z',
  });
  const boot = (append: string[]) => bootWithApi({ append, disks: [{ file: state, format: 'raw' }] }, 'dhcp',
    { secrets: 'none' });
  let m = await boot(['appliance.test.pause=config-save']);
  t.teardown(() => m.vm.kill());
  // Written through the API (saved 0.5 s later, as writes are); cosictl's own last calls may meet the stopped machine.
  const applying = m.run(['apply', '-f', '-'], motd('after', 'never saved'));
  await m.vm.waitFor(/APPLIANCE TEST PAUSE config-save/, 60_000);
  await (await m.vm.qmp()).execute('quit').catch(() => undefined); // the power goes; QMP may close first
  await applying;
  m = await boot([]);
  const motds = (await m.run(['get', 'motd'])).out;
  t.match(motds, /before/, 'the old config');
  t.notMatch(motds, /after/, 'none of the new');
  const config = await json(m, ['get', 'configstatus'], /bootProblem/);
  t.match(config.items[0]?.spec, {
    state: 'applied', source: 'state', bootProblem: new RegExp('^a save was under way when the machine stopped '
      + '\\(\\.machine-config\\.yaml\\.1\\.tmp left, now removed\\); the config saved before it loaded$'),
  }, 'and says a save was cut');
  said('power cut in a config save', config.items[0]?.spec.bootProblem);
});
