// errno names from the kernel's list, whatever form the error takes: real calls on this host (a FIFO with no
// reader, a symlink loop, a full tmpfs, a read-only mount, a clone on tmpfs, a corrupt ext4 directory) through
// Node's fs and through the addon. An empty CD-ROM's ENOMEDIUM is made in a guest (qemu/devices.test.ts).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import {
  constants, copyFileSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, symlinkSync,
  writeFileSync,
} from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ERRNO_BY_NAME, ERRNO_BY_NUMBER } from './gen/errno-table.ts';
import { errnoName, errnoNumber, errnoOf, isErrno } from './errno.ts';
import { native } from './index.ts';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MS_RDONLY = 1;
const scratch = mkdtempSync(join(tmpdir(), 'errno-'));
const caught = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('the call did not fail');
};

t.test('the table: every number of the kernel\'s list, aliases resolved to the first name', async (t) => {
  t.equal(ERRNO_BY_NUMBER.get(123)?.name, 'ENOMEDIUM');
  t.equal(ERRNO_BY_NUMBER.get(117)?.name, 'EUCLEAN');
  t.equal(errnoName(11), 'EAGAIN', 'EWOULDBLOCK is an alias');
  t.equal(errnoNumber('EWOULDBLOCK'), 11);
  t.equal(errnoName(95), 'EOPNOTSUPP', 'POSIX ENOTSUP is EOPNOTSUPP');
  t.equal(errnoNumber('ENOTSUP'), 95);
  t.equal(errnoName(35), 'EDEADLK', 'EDEADLOCK is an alias');
  t.equal(errnoName(524), 'ENOTSUPP', 'kernel-internal numbers some ioctls return are named too');
  t.equal(errnoName(-2), 'ENOENT', 'libuv\'s negative numbers');
  t.equal(errnoName(4000), 'E4000', 'a number without a name');
  for (const n of [1, 2, 5, 13, 17, 22, 28, 30, 40, 110, 133]) t.ok(ERRNO_BY_NUMBER.has(n), `errno ${n}`);
});

t.test('the forms errors come in', async (t) => {
  t.equal(errnoOf({ code: 'Unknown system error -123', errno: -123 }), 'ENOMEDIUM', 'libuv with no name for it');
  t.equal(errnoOf({ errno: 117 }), 'EUCLEAN', 'a number alone (netlink)');
  t.equal(errnoOf({ code: 'ENOTSUP', errno: -95 }), 'EOPNOTSUPP', 'libuv\'s name for an alias');
  t.equal(errnoOf({ code: 'Z_DATA_ERROR', errno: -3 }), undefined, 'zlib\'s codes are not errnos');
  t.equal(errnoOf({ code: 'EOF', errno: -4095 }), undefined, 'nor libuv\'s EOF');
  t.equal(errnoOf({ code: 'ERR_INVALID_ARG_TYPE' }), undefined);
  t.equal(errnoOf({ code: 'ERR_SYSTEM_ERROR', errno: -3, info: { code: 'ESRCH', errno: -3 } }), 'ESRCH',
    'Node\'s SystemError (os calls): the name in info');
  t.equal(errnoOf(undefined), undefined);
  t.equal(errnoOf('ENOENT'), undefined, 'a string is not an error');
  t.ok(isErrno({ code: 'EWOULDBLOCK' }, 'EAGAIN'), 'aliases match');
  t.notOk(isErrno({ code: 'ENOENT' }, 'EEXIST', 'EPERM'));
});

t.test('real errors from Node\'s fs and os', async (t) => {
  const fifo = join(scratch, 'fifo');
  execFileSync('mkfifo', [fifo]);
  t.equal(errnoOf(caught(() => openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))), 'ENXIO',
    'a FIFO nobody reads');
  const loop = join(scratch, 'loop');
  symlinkSync(loop, loop);
  t.equal(errnoOf(caught(() => readFileSync(loop))), 'ELOOP', 'a symlink to itself');
  t.equal(errnoOf(caught(() => openSync(join(scratch, 'absent'), 'r'))), 'ENOENT');
  // A pid above pid_max is never a process.
  t.equal(errnoOf(caught(() => setPriority(1 << 23, 0))), 'ESRCH', 'os.setPriority of no process (a SystemError)');
});

if (process.getuid?.() !== 0) {
  t.test('mounts need root', async (t) => {
    t.plan(0, 'not root');
  });
} else {
  const n = native();
  const tmpfs = (name: string, flags: number, data: string) => {
    const dir = join(scratch, name);
    mkdirSync(dir);
    n.mount('tmpfs', dir, 'tmpfs', flags, data);
    t.teardown(() => n.umount2(dir, 2 /* MNT_DETACH */));
    return dir;
  };

  t.test('real errors on real filesystems', async (t) => {
    const full = tmpfs('full', 0, 'size=64k');
    t.equal(errnoOf(caught(() => writeFileSync(join(full, 'big'), Buffer.alloc(256 * 1024)))), 'ENOSPC',
      'a full tmpfs');
    const ro = tmpfs('ro', MS_RDONLY, 'size=64k');
    t.equal(errnoOf(caught(() => writeFileSync(join(ro, 'x'), 'x'))), 'EROFS', 'a read-only mount');
    const small = tmpfs('small', 0, 'size=64k');
    const plain = join(small, 'plain');
    writeFileSync(plain, 'x');
    const clone = caught(() => copyFileSync(plain, join(small, 'clone'), constants.COPYFILE_FICLONE_FORCE));
    t.equal(errnoOf(clone), 'EOPNOTSUPP', `tmpfs cannot clone (Node says ${(clone as { code?: string }).code})`);
  });

  t.test('the addon names its errors from the same table', async (t) => {
    const file = join(scratch, 'not-a-device');
    writeFileSync(file, Buffer.alloc(4096));
    const target = join(scratch, 'target');
    mkdirSync(target);
    const e = caught(() => n.mount(file, target, 'ext4', MS_RDONLY));
    t.match(e, { code: 'ENOTBLK', errno: 15, syscall: 'mount' }, 'a regular file is no block device');
    t.equal(errnoOf(e), 'ENOTBLK');
    t.match(caught(() => n.umount2(target)), { code: 'EINVAL', errno: 22 }, 'nothing is mounted there');
  });

  t.test('an errno libuv has no name for, from a real call: a corrupt ext4 directory', async (t) => {
    const content = join(scratch, 'content');
    mkdirSync(join(content, 'dir'), { recursive: true });
    for (let i = 0; i < 8; i++) writeFileSync(join(content, 'dir', `file-${i}`), 'x');
    const image = join(scratch, 'fs.img');
    execFileSync('truncate', ['-s', '8M', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-b', '4096', '-O', 'metadata_csum', '-d', content, image]);
    // The directory's one block, overwritten: its checksum no longer matches.
    const blocks = execFileSync('debugfs', ['-R', 'blocks /dir', image], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
    });
    const block = Number(blocks.trim().split(/\s+/)[0]);
    t.ok(block > 0, `the directory's block: ${block}`);
    execFileSync('dd', [`if=/dev/urandom`, `of=${image}`, 'bs=4096', `seek=${block}`, 'count=1', 'conv=notrunc'], {
      stdio: 'ignore',
    });
    const { device, fd } = n.attachLoop(image);
    const mnt = join(scratch, 'corrupt');
    mkdirSync(mnt);
    try {
      n.mount(device, mnt, 'ext4', MS_RDONLY);
    } finally {
      n.closeFd(fd);
    }
    t.teardown(() => n.umount2(mnt, 2));
    const e = caught(() => readdirSync(join(mnt, 'dir'))) as { code?: string };
    t.match(e.code, /^Unknown system error -\d+$/, `Node has no name for it: ${e.code}`);
    t.ok(['EBADMSG', 'EUCLEAN'].includes(errnoOf(e) ?? ''), `named from the table: ${errnoOf(e)}`);
  });
}

t.test('every errno name the code tests for is one the kernel has (a typo would never match)', async (t) => {
  const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  const unknown: string[] = [];
  for (const f of files) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    for (const call of text.matchAll(/\bisErrno\([^)]*\)|errnoOf\([^)]*\) [!=]== '[^']*'/g)) {
      for (const [, name] of call[0].matchAll(/'(E[A-Z0-9]+)'/g)) {
        if (!ERRNO_BY_NAME.has(name!)) unknown.push(`${f}: ${name}`);
      }
    }
  }
  t.same(unknown, []);
});
