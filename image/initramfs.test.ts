// Tests of the built initramfs (npm test builds it first): what it holds, and that
// the same tree gives the same bytes.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { artifacts } from '../qemu/artifacts.ts';
import { ADDON_PATH } from '../scripts/native.ts';
import { buildKernel } from '../scripts/kernel.ts';
import { sha256 } from './hash.ts';
import { decodeCpio, encodeCpioBuffer } from './cpio.ts';
import { initramfsEntries } from './initramfs.ts';

const a = artifacts();
const archive = decodeCpio(execFileSync('zstd', ['-dc', a.initrd], { maxBuffer: 1 << 30 }));

const kernel = await buildKernel(); // a cache hit: the build made it
const modules = { dir: kernel.modules, release: kernel.release };
const VXLAN_DEP_LINE =
  /^kernel\/drivers\/net\/vxlan\/vxlan\.ko: kernel\/net\/ipv6\/ip6_udp_tunnel\.ko kernel\/net\/ipv4\/udp_tunnel\.ko$/m;

t.test('holds the executable, the addon, shared libraries, kernel modules, directories'
  + ' and two device nodes: no shell', async (t) => {
  const files = archive.filter((e) => e.type === 'file').map((e) => e.path);
  t.ok(files.includes('init'), '/init');
  t.ok(files.includes('lib/appliance_native.node'), 'native addon');
  const keys = files.filter((p) => p.startsWith('etc/appliance/upgrade-keys/'));
  t.match(keys, [/^etc\/appliance\/upgrade-keys\/[0-9a-f]{16}\.pem$/], 'one trusted upgrade key, the build\'s');
  t.equal(keys.length, 1);
  t.match(archive.find((e) => e.path === keys[0])?.data.toString(), /^-----BEGIN PUBLIC KEY-----\n/, 'public only');
  const others = files.filter((p) => p !== 'init' && p !== 'lib/appliance_native.node' && !keys.includes(p));
  const modDir = `lib/modules/${kernel.release}/`;
  t.same(
    others.filter((p) => !/^lib(64)?\/(x86_64-linux-gnu\/)?[\w+-]+\.so(\.[\d.]+)?$/.test(p) && !p.startsWith(modDir)),
    [], 'every other file is a shared library or a module',
  );
  const mods = others.filter((p) => p.startsWith(modDir)).map((p) => p.slice(modDir.length));
  t.same(
    mods.filter((p) => !p.endsWith('.ko')).sort(),
    ['modules.alias', 'modules.builtin', 'modules.builtin.modinfo', 'modules.dep', 'modules.order', 'modules.softdep'],
    'module index files',
  );
  const dep = archive.find((e) => e.path === `${modDir}modules.dep`)!.data.toString();
  t.match(dep, VXLAN_DEP_LINE, 'vxlan after what it needs');
  t.match(dep, /^kernel\/drivers\/net\/dummy\.ko:$/m, 'dummy needs nothing');
  const alias = archive.find((e) => e.path === `${modDir}modules.alias`)!.data.toString();
  t.match(alias, /^alias pci:v00008086d000010D3sv\*sd\*bc\*sc\*i\* e1000e$/m, 'the NIC QEMU calls e1000e');
  t.match(alias, /^alias pci:v\*d\*sv\*sd\*bc01sc08i02\* nvme$/m, 'any NVMe controller, by class');
  t.match(alias, /^alias virtio:d00000008v\* virtio_scsi$/m, 'virtio-scsi');
  t.match(archive.find((e) => e.path === `${modDir}modules.softdep`)!.data.toString(), /^softdep r8169 pre: realtek$/m,
    'r8169 asks for its PHY driver first');
  const names = archive.map((e) => e.path.split('/').pop());
  const shells = ['sh', 'bash', 'dash', 'ash', 'busybox', 'toybox', 'ls', 'cat', 'mount', 'ip'];
  for (const shell of shells) t.notOk(names.includes(shell), `no ${shell}`);
  t.same(archive.filter((e) => e.type === 'symlink').map((e) => e.path), [], 'no symlinks');
  t.same(archive.filter((e) => e.type === 'chardev').map((e) => e.path).sort(), ['dev/console', 'dev/null']);
  const init = archive.find((e) => e.path === 'init')!;
  t.equal(init.data.subarray(0, 4).toString('latin1'), '\x7fELF', '/init is an ELF executable');
  t.equal(init.mode & 0o111, 0o111, '/init is executable');
  t.ok(archive.every((e) => e.uid === 0 && e.gid === 0), 'owned by root');
  t.same(archive.filter((e) => e.mode & 0o6000).map((e) => e.path), [], 'no setuid or setgid file');
  t.same(archive.filter((e) => e.type !== 'chardev' && e.mode & 0o002 && !(e.type === 'dir' && e.mode & 0o1000))
    .map((e) => e.path), [], 'nothing world-writable (but sticky directories)');
  const interpreters = /^(python[\d.]*|perl[\d.]*|ruby|lua[\d.]*|node|nodejs|tclsh|awk|gawk|busybox|php)$/;
  t.same(names.filter((n) => interpreters.test(n ?? '')), [], 'no interpreter but /init itself');
  t.equal(new Set(archive.map((e) => e.mtime)).size, 1, 'one fixed mtime');
});

t.test('deterministic: the same tree encodes and compresses to the same sha256', async (t) => {
  t.ok(existsSync(ADDON_PATH));
  // The build's own files (its trusted key) as the build put them: the same inputs.
  const files = archive.flatMap((e) => (e.type === 'file' && e.path.startsWith('etc/appliance/')
    ? [{ path: `/${e.path}`, data: Buffer.from(e.data), mode: e.mode & 0o7777 }] : []));
  const entries = initramfsEntries({ init: a.exe, addon: ADDON_PATH, mtime: archive[0]!.mtime, modules, files });
  const cpio1 = encodeCpioBuffer(entries);
  const cpio2 = encodeCpioBuffer(initramfsEntries({
    init: a.exe, addon: ADDON_PATH, mtime: archive[0]!.mtime, modules, files,
  }));
  t.equal(sha256(cpio1), sha256(cpio2), 'cpio bytes');
  const built = execFileSync('zstd', ['-dc', a.initrd], { maxBuffer: 1 << 30 });
  t.equal(sha256(cpio1), sha256(built), 'rebuilt cpio equals the one in out/');
  // The build compresses with -T0 (all cores); one thread must give the same bytes.
  const again = execFileSync('zstd', ['-19', '-T1', '-q', '-c'], { input: cpio1, maxBuffer: 1 << 30 });
  t.equal(
    sha256(again), sha256(readFileSync(a.initrd)), 'recompressing gives the same sha256 as out/initramfs.cpio.zst',
  );
});
