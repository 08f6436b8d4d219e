// Tests of the built initramfs and the system image inside it (npm test builds them first):
// what each holds, and that the same inputs give the same bytes.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { artifacts } from '../qemu/artifacts.ts';
import { ADDON_PATH } from '../scripts/native.ts';
import { buildKernel } from '../scripts/kernel.ts';
import { BUILD } from '../scripts/lib/paths.ts';
import { sha256 } from './hash.ts';
import { decodeCpio, encodeCpioBuffer, type CpioEntry } from './cpio.ts';
import { INITRAMFS_LIMIT_BYTES, INITRAMFS_ZSTD_LEVEL, initramfsEntries } from './initramfs.ts';
import { SYSTEM_IMAGE_MOUNT as SYSTEM_IMAGE_DIR } from '../machinery/disk/labels.ts';
import {
  contentTime, readSuperblock, readSystemImage, RELEASE_COMPRESSION, SUPERBLOCK_BYTES, SUPERBLOCK_FILE,
  SYSTEM_IMAGE_FILE, systemImageEntries, topLevelDirs, writeSystemImage,
} from './system-image.ts';

const a = artifacts();
const archive = decodeCpio(execFileSync('zstd', ['-dc', a.initrd], { maxBuffer: 1 << 30 }));
const imageFile = join(BUILD, SYSTEM_IMAGE_FILE);

const kernel = await buildKernel(); // a cache hit: the build made it
const modules = { dir: kernel.modules, release: kernel.release };
const VXLAN_DEP_LINE =
  /^kernel\/drivers\/net\/vxlan\/vxlan\.ko: kernel\/net\/ipv6\/ip6_udp_tunnel\.ko kernel\/net\/ipv4\/udp_tunnel\.ko$/m;

/** The image's files as unsquashfs lists them: path -> mode string, owner, size. */
const listing = new Map(execFileSync('unsquashfs', ['-lln', imageFile], { maxBuffer: 1 << 26 }).toString()
  .split('\n').flatMap((l) => {
    const m = /^(\S{10}) (\d+\/\d+)\s+(\d+) \S+ \S+ squashfs-root(?:\/(.+))?$/.exec(l);
    return m ? [[m[4] ?? '/', { mode: m[1]!, owner: m[2]!, size: Number(m[3]) }] as const] : [];
  }));
const cat = (path: string) => execFileSync('unsquashfs', ['-cat', imageFile, path], { maxBuffer: 1 << 30 });

/** PT_INTERP among an ELF64's program headers: a dynamically linked executable. */
function hasInterpreter(elf: Buffer): boolean {
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const size = elf.readUInt16LE(0x36);
  for (let i = 0; i < elf.readUInt16LE(0x38); i++) if (elf.readUInt32LE(phoff + i * size) === 3) return true;
  return false;
}

t.test('the initramfs: stage0 as /init, the system image, links into it, the build\'s key, two device nodes',
  async (t) => {
    const files = archive.filter((e) => e.type === 'file').map((e) => e.path);
    const keys = files.filter((p) => p.startsWith('etc/appliance/upgrade-keys/'));
    t.match(keys, [/^etc\/appliance\/upgrade-keys\/[0-9a-f]{16}\.pem$/], 'one trusted upgrade key, the build\'s');
    t.match(archive.find((e) => e.path === keys[0])?.data.toString(), /^-----BEGIN PUBLIC KEY-----\n/, 'public only');
    t.same(files.filter((p) => !keys.includes(p)).sort(), ['init', SYSTEM_IMAGE_FILE], 'no other file');
    const init = archive.find((e) => e.path === 'init')!;
    t.equal(init.data.subarray(0, 4).toString('latin1'), '\x7fELF', '/init is an ELF executable');
    t.notOk(hasInterpreter(init.data), '/init is static: it runs before the libraries are mounted');
    t.ok(init.data.length < 16 << 10, `/init is small: no C library (${init.data.length} bytes)`);
    t.equal(init.mode & 0o111, 0o111, '/init is executable');
    t.same(archive.find((e) => e.path === SYSTEM_IMAGE_FILE)?.data.equals(readFileSync(imageFile)), true,
      'the system image is the one the build wrote');
    t.same(archive.filter((e) => e.type === 'symlink').map((e) => [e.path, e.data.toString()]),
      [['lib', '/system/image/lib'], ['lib64', '/system/image/lib64']], 'lib and lib64 lead into the image');
    t.ok(archive.some((e) => e.type === 'dir' && e.path === 'system/image'), 'the mount point is there');
    t.match(readFileSync(new URL('stage0/stage0.c', import.meta.url), 'utf8'),
      new RegExp(`#define MOUNT_DIR "${SYSTEM_IMAGE_DIR}"`), 'where stage0 mounts it is where PID 1 expects it');
    t.same(archive.filter((e) => e.type === 'chardev').map((e) => e.path).sort(), ['dev/console', 'dev/null']);
    t.ok(archive.every((e) => e.uid === 0 && e.gid === 0), 'owned by root');
    t.same(archive.filter((e) => e.mode & 0o6000).map((e) => e.path), [], 'no setuid or setgid file');
    t.same(archive.filter((e) => e.type !== 'chardev' && e.type !== 'symlink' && e.mode & 0o002
      && !(e.type === 'dir' && e.mode & 0o1000)).map((e) => e.path), [], 'nothing world-writable (but /tmp)');
    t.equal(new Set(archive.map((e) => e.mtime)).size, 1, 'one fixed mtime');
    // What the kernel unpacks into RAM it never gives back (bench:boot prints it too).
    const bytes = readFileSync(a.initrd).length;
    t.ok(bytes <= INITRAMFS_LIMIT_BYTES,
      `the compressed initramfs is at most ${INITRAMFS_LIMIT_BYTES / 1e6} MB (${(bytes / 1e6).toFixed(2)} MB)`);
  });

t.test('stage0 names what failed, the path and the errno, and exits 1 (here: no system image on this host)',
  async (t) => {
    t.notOk(existsSync('/system.squashfs'), 'this host has no /system.squashfs');
    const r = spawnSync(join(BUILD, 'stage0'), ['x'], { encoding: 'utf8' });
    t.equal(r.status, 1, 'exit 1 (as PID 1: the kernel panics, after the line)');
    t.equal(r.stderr, 'stage0: cannot open the system image /system.squashfs: No such file or directory\n');
  });

t.test('the system image: the executable, the addon, shared libraries and kernel modules; no shell', async (t) => {
  const files = [...listing].filter(([, f]) => f.mode.startsWith('-')).map(([p]) => p);
  t.ok(files.includes('init'), 'init (the executable)');
  t.ok(files.includes('lib/appliance_native.node'), 'native addon');
  t.ok(files.includes('lib64/ld-linux-x86-64.so.2'), 'the ELF interpreter, where the executable looks for it');
  const modDir = `lib/modules/${kernel.release}/`;
  const others = files.filter((p) => p !== 'init' && p !== 'lib/appliance_native.node');
  t.same(
    others.filter((p) => !/^lib(64)?\/(x86_64-linux-gnu\/)?[\w+-]+\.so(\.[\d.]+)?$/.test(p) && !p.startsWith(modDir)),
    [], 'every other file is a shared library or a module',
  );
  t.same(others.filter((p) => p.startsWith(modDir)).map((p) => p.slice(modDir.length)).filter((p) => !p.endsWith('.ko'))
    .sort(), ['modules.alias', 'modules.builtin', 'modules.builtin.modinfo', 'modules.dep', 'modules.order',
    'modules.softdep'], 'module index files');
  t.match(cat(`${modDir}modules.dep`).toString(), VXLAN_DEP_LINE, 'vxlan after what it needs');
  t.match(cat(`${modDir}modules.dep`).toString(), /^kernel\/drivers\/net\/dummy\.ko:$/m, 'dummy needs nothing');
  const alias = cat(`${modDir}modules.alias`).toString();
  t.match(alias, /^alias pci:v00008086d000010D3sv\*sd\*bc\*sc\*i\* e1000e$/m, 'the NIC QEMU calls e1000e');
  t.notMatch(alias, / (nvme|virtio_scsi|xhci_pci|usb_storage|usbhid)$/m, 'NVMe, virtio-scsi, xHCI and USB storage are '
    + 'built in (stage0 reads the system image from them), USB keyboards are not built');
  t.match(cat(`${modDir}modules.softdep`).toString(), /^softdep r8169 pre: realtek$/m, 'r8169 asks for its PHY first');
  const names = [...listing.keys()].map((p) => p.split('/').pop());
  const shells = ['sh', 'bash', 'dash', 'ash', 'busybox', 'toybox', 'ls', 'cat', 'mount', 'ip'];
  for (const shell of shells) t.notOk(names.includes(shell), `no ${shell}`);
  const interpreters = /^(python[\d.]*|perl[\d.]*|ruby|lua[\d.]*|node|nodejs|tclsh|awk|gawk|busybox|php)$/;
  t.same(names.filter((n) => interpreters.test(n ?? '')), [], 'no interpreter but init itself');
  t.same([...listing].filter(([, f]) => f.owner !== '0/0').map(([p]) => p), [], 'owned by root');
  t.same([...listing].filter(([, f]) => f.mode.startsWith('d') && f.mode !== 'drwxr-xr-x').map(([p]) => p), [],
    'every directory 0755, the root too');
  t.same([...listing].filter(([, f]) => /[sS]/.test(f.mode) || f.mode[8] === 'w').map(([p]) => p), [],
    'no setuid, setgid or world-writable file');
  t.equal(cat('init').subarray(0, 4).toString('latin1'), '\x7fELF', 'init is an ELF executable');
  t.equal(listing.get('init')?.size, readFileSync(a.exe).length, 'init is the built executable');
});

t.test('deterministic: the same inputs give the same system image and initramfs bytes', async (t) => {
  t.ok(existsSync(ADDON_PATH));
  const mtime = archive[0]!.mtime;
  const imageEntries = systemImageEntries({ init: a.exe, addon: ADDON_PATH, modules });
  const image = join(mkdtempSync(join(tmpdir(), 'system-image-')), SYSTEM_IMAGE_FILE);
  writeSystemImage(imageEntries, image, mtime, RELEASE_COMPRESSION);
  t.equal(sha256(readFileSync(image)), sha256(readFileSync(imageFile)), 'system image rebuilt equals the build\'s');
  // The build's own files (its trusted key) as the build put them: the same inputs.
  const files = archive.flatMap((e) => (e.type === 'file' && e.path.startsWith('etc/appliance/')
    ? [{ path: `/${e.path}`, data: Buffer.from(e.data), mode: e.mode & 0o7777 }] : []));
  const stage0 = join(BUILD, 'stage0');
  const inputs = { stage0, systemImage: { file: image, topLevelDirs: topLevelDirs(imageEntries) }, mtime, files };
  const cpio1 = encodeCpioBuffer(initramfsEntries(inputs));
  t.equal(sha256(cpio1), sha256(encodeCpioBuffer(initramfsEntries(inputs))), 'cpio bytes');
  t.equal(sha256(cpio1), sha256(execFileSync('zstd', ['-dc', a.initrd], { maxBuffer: 1 << 30 })),
    'rebuilt cpio equals the one in out/');
  // zstd's output does not depend on its thread count, so one thread gives the build's bytes.
  const zstd = [`-${INITRAMFS_ZSTD_LEVEL}`, '-T1', '-q', '-c'];
  const again = execFileSync('zstd', zstd, { input: cpio1, maxBuffer: 1 << 30 });
  t.equal(sha256(again), sha256(readFileSync(a.initrd)), 'recompressing gives the bytes of out/initramfs.cpio.zst');
});

t.test('the disk form: the image uncompressed and named by its superblock, an initramfs with that superblock only',
  async (t) => {
    const disk = decodeCpio(execFileSync('zstd', ['-dc', a.disk.initramfs], { maxBuffer: 1 << 30 }));
    const files = disk.filter((e) => e.type === 'file').map((e) => e.path);
    const superblock = readSuperblock(a.disk.image);
    t.same(files.filter((p) => !p.startsWith('etc/appliance/')).sort(), ['init', SUPERBLOCK_FILE],
      'stage0 and the superblock; no image');
    t.ok(disk.find((e) => e.path === SUPERBLOCK_FILE)?.data.equals(superblock), 'the superblock is the disk image\'s');
    t.throws(() => readSuperblock(a.initrd), /initramfs\.cpio\.zst: not a squashfs image \(no filesystem found\)/,
      'a file that is no squashfs is named');
    const vfat = join(mkdtempSync(join(tmpdir(), 'superblock-')), 'fat.img');
    execFileSync('mkfs.vfat', ['-C', vfat, '1024'], { stdio: 'ignore' });
    t.throws(() => readSuperblock(vfat), /fat\.img: not a squashfs image \(vfat found\)/, 'and what it holds');
    rmSync(dirname(vfat), { recursive: true });
    t.ok(disk.find((e) => e.path === 'init')?.data.equals(archive.find((e) => e.path === 'init')!.data),
      'the same stage0');
    t.same(disk.filter((e) => e.type === 'symlink').map((e) => e.path), ['lib', 'lib64'], 'the same links');
    t.match(readFileSync(new URL('stage0/stage0.c', import.meta.url), 'utf8'),
      new RegExp(`#define SUPERBLOCK "/${SUPERBLOCK_FILE}"\\n#define SUPERBLOCK_BYTES ${SUPERBLOCK_BYTES}\\n`),
      'stage0 reads the superblock where the build puts it, as many bytes');
    // The same files as the release's image, not compressed (flags 0x0001 | 0x0002 | 0x0008: inodes, data and
    // fragments uncompressed), and its mkfs time (bytes 8-11) a hash of them, not the build's fixed time.
    const sameFiles = readSystemImage(a.disk.image);
    const release = readSystemImage(imageFile);
    t.same(sameFiles.map((e) => e.path), release.map((e) => e.path), 'the same files');
    const bytes = (e: CpioEntry | undefined) => (e?.type === 'file' ? Buffer.from(e.data) : Buffer.alloc(0));
    t.ok(sameFiles.every((e, i) => e.type === 'file' && bytes(e).equals(bytes(release[i]))),
      'the same bytes in each');
    t.equal(superblock.readUInt16LE(24) & 0x0b, 0x0b, 'inodes, data and fragments stored uncompressed');
    t.equal(superblock.readUInt32LE(8), contentTime(release), 'mkfs time: the hash of its files');
    t.not(superblock.readUInt32LE(8), archive[0]!.mtime, 'not the build\'s fixed time');
    const other = [...release];
    const i = other.findIndex((e) => e.path.endsWith('.ko'));
    const ko = other[i] as Extract<CpioEntry, { type: 'file' }>;
    const changed = Buffer.from(ko.data);
    changed[0] = changed[0]! ^ 1;
    other[i] = { ...ko, data: changed };
    t.not(contentTime(other), contentTime(release), 'one byte changed in one file: another superblock');
  });
