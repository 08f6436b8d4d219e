// The machine config in the real machine: PID 1 mounts the filesystem labelled STATE,
// a config applied over the API is persisted there and comes back at the next boot
// with no other source.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi, type ApiVm } from './api-vm.ts';

const dir = mkdtempSync(join(tmpdir(), 'config-vm-'));
const state = join(dir, 'state.img');
execFileSync('truncate', ['-s', '32M', state]);
execFileSync('mke2fs', ['-q', '-t', 'ext4', '-L', 'STATE', state]);
const boot = () => bootWithApi({ disks: [{ file: state, format: 'raw' }] });

let vm: ApiVm = await boot();
t.teardown(() => vm.vm.kill());

const config = `metadata: {type: motd, id: persisted}
spec: {text: "kept across boots"}
---
metadata: {type: hostnamespec, id: mine}
spec: {hostname: node-persisted}
`;

t.test('PID 1 mounts STATE; an applied config is persisted there', async (t) => {
  t.match(vm.vm.console(), /state: \/dev\/vda mounted on \/system\/state/);
  const st = await vm.run(['get', 'configstatus', 'machine', '-o', 'yaml']);
  t.match(st.out, /state: maintenance[\s\S]*persistedTo: \/system\/state\/machine-config\.yaml/);
  const r = await vm.run(['apply-config', '-f', '-'], config);
  t.equal(r.code, 0, r.err);
  t.match(r.out,
    /motd\/persisted created\nhostnamespec\/mine created\npersisted to \/system\/state\/machine-config\.yaml/);
  t.match((await vm.poll(['get', 'hostnamestatus', '-o', 'yaml'], /node-persisted/)).out, /node-persisted/);
});

t.test('the next boot applies the persisted config with no other source', async (t) => {
  const off = await vm.vm.powerdown(60_000);
  t.ok(off.clean, 'powered off cleanly (STATE unmounted)');
  vm = await boot();
  t.match(vm.vm.console(), /persisted config from \/system\/state\/machine-config\.yaml applied: 2 created/);
  const st = await vm.run(['get', 'configstatus', 'machine', '-o', 'yaml']);
  t.match(st.out, /state: applied[\s\S]*source: state/);
  t.match((await vm.run(['get', 'motd', 'persisted', '-o', 'yaml'])).out, /kept across boots/);
  t.match((await vm.poll(['get', 'hostnamestatus', '-o', 'yaml'], /node-persisted/)).out, /node-persisted/,
    'and the plugins act on it');
});


t.test('a tried config that cuts the API off is reverted by itself and the API comes back', async (t) => {
  const cutOff = `${config}---\nmetadata: {type: linkspec, id: eth0}\nspec: {link: eth0, up: false}\n`;
  const tried = await vm.run(['--timeout', '20s', 'apply-config', '--try', '15s', '-f', '-'], cutOff);
  // The answer usually leaves before the link goes down; if not, the call times out as unreachable.
  t.ok(tried.code === 0 || tried.code === 5, `apply-config --try: ${tried.code} ${tried.err}`);
  const during = await vm.run(['--timeout', '3s', 'get', 'versions']);
  t.equal(during.code, 5, 'the API is cut off while the tried config holds eth0 down');
  const back = await vm.poll(['--timeout', '3s', 'get', 'configstatus', 'machine', '-o', 'yaml'],
    /state: reverted/, 90_000);
  t.match(back.out, /state: reverted/);
  t.match(back.out, /tried config not confirmed by/);
  t.equal((await vm.run(['get', 'linkspec', 'eth0'])).code, 4, 'the tried linkspec is gone');
  t.match((await vm.run(['get', 'motd', 'persisted', '-o', 'yaml'])).out, /kept across boots/, 'the rest is kept');
  t.match(vm.vm.console(), /tried config not confirmed in time: reverted \([^)]*\b1 deleted/);
});
