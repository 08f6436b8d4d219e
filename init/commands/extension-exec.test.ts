// The extension launcher on the host's real kernel (root): it becomes the program (same pid) inside
// the image as its root, as its own uid with the declared capabilities only (ambient; bounding set
// too), no_new_privs, the seccomp filter, a /proc of its own processes, a /dev of harmless devices,
// a volume bound in, and the plugin socket bound in; the launch variable is gone from the program's environment. The
// image is Python's minimal interpreter with its libraries, from this host's Debian packages. A
// program not in the image, or no launch at all: the launcher says so and fails.
import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts } from '../../qemu/artifacts.ts';
import { copyPackageFiles, packageClosure, squashfs } from '../../qemu/extension-image.ts';
import { native } from '../../native/index.ts';
import { mountSquashfsImage } from '../../machinery/sys/image-mount.ts';
import { MNT_DETACH } from '../../machinery/sys/mount-table.ts';
import { encodeLaunch, EXTENSION_LAUNCH_ENV, type ExtensionLaunch } from '../../machinery/model/extension-launch.ts';

const PROBE = `
import os
def field(k):
    for line in open("/proc/self/status"):
        if line.startswith(k + ":"):
            return " ".join(line.split(":", 1)[1].split())
print("pid=" + str(os.getpid()))
print("procs=" + " ".join(sorted(p for p in os.listdir("/proc") if p.isdigit())))
for k in ("Uid", "Gid", "Groups", "CapEff", "CapBnd", "CapPrm", "CapAmb", "NoNewPrivs", "Seccomp"):
    print(k + "=" + field(k))
print("root=" + " ".join(sorted(os.listdir("/"))))
print("dev=" + " ".join(sorted(os.listdir("/dev"))))
print("socket=" + str(os.path.exists("/run/cosi/plugins.sock")))
print("env=" + " ".join(sorted(k for k in os.environ)))
print("launch=" + os.environ.get("${EXTENSION_LAUNCH_ENV}", "-"))
print("cwd=" + os.getcwd())
`;

if (process.getuid?.() !== 0 || !existsSync('/dev/loop-control')) {
  t.plan(0, 'needs root and /dev/loop-control (loop devices)');
} else {
  await launcherTests();
}

async function launcherTests(): Promise<void> {
  const n = native();
  const exe = artifacts().exe;
  const dir = mkdtempSync(join(tmpdir(), 'extension-exec-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'root');
  mkdirSync(root);
  copyPackageFiles(packageClosure(['python3-minimal']), root);
  execFileSync('ldconfig', ['-r', root]);
  for (const d of ['proc', 'dev', 'tmp', 'run', 'data']) mkdirSync(join(root, d));
  const image = squashfs(root, join(dir, 'probe.squashfs'), 0).path;
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  mountSquashfsImage(n, image, mnt);
  t.teardown(() => n.umount2(mnt, MNT_DETACH));
  const socketPath = join(dir, 'plugins.sock');
  const server = createServer(() => {});
  await new Promise<void>((r) => server.listen(socketPath, r));
  chmodSync(socketPath, 0o666); // as the engine's: reached by extensions' own uids
  t.teardown(() => server.close());

  const launch = (l: Partial<ExtensionLaunch>) => new Promise<{ pid: number; code: number | null; out: string;
    err: string }>((resolve) => {
    const full: ExtensionLaunch = {
      name: 'probe', image: mnt, pluginSocket: socketPath, executable: '/usr/bin/python3', uid: 61999,
      args: ['-c', PROBE], env: { GREETING: 'hi' }, capabilities: ['CAP_NET_BIND_SERVICE'], workingDir: '/usr/lib',
      ...l,
    };
    const c = spawn(exe, ['extension-exec'], {
      env: { PATH: '/usr/bin', [EXTENSION_LAUNCH_ENV]: encodeLaunch(full) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    c.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    c.on('exit', (code) => resolve({ pid: c.pid ?? 0, code, out, err }));
  });
  const fields = (out: string) => Object.fromEntries(out.trim().split('\n').map((l) => {
    const i = l.indexOf('=');
    return [l.slice(0, i), l.slice(i + 1)];
  }));

  t.test('the launcher becomes the program, confined, in the image as its root', async (t) => {
    const r = await launch({});
    t.equal(r.code, 0, r.err);
    const f = fields(r.out);
    t.equal(Number(f.pid), r.pid, 'the same process: the engine knows it by this pid');
    t.equal(f.procs, String(r.pid), 'its /proc shows its own process only');
    t.equal(f.Uid, '61999 61999 61999 61999');
    t.equal(f.Gid, '61999 61999 61999 61999');
    t.equal(f.Groups, '', 'no supplementary groups');
    t.equal(f.CapEff, '0000000000000400', 'CAP_NET_BIND_SERVICE alone');
    t.equal(f.CapAmb, '0000000000000400', 'kept across execve as an ambient capability');
    t.equal(f.CapBnd, '0000000000000400', 'and nothing left to gain');
    t.equal(f.NoNewPrivs, '1');
    t.equal(f.Seccomp, '2');
    t.same(f.root?.split(' '), readdirSync(root).sort(), 'its root is the image');
    t.equal(f.dev, 'full null random urandom zero');
    t.equal(f.socket, 'True');
    t.equal(f.launch, '-', 'the launch variable is not passed on');
    t.match(f.env, /COSI_PLUGIN_NAME/);
    t.match(f.env, /COSI_PLUGIN_SOCKET/);
    t.match(f.env, /GREETING/);
    t.equal(f.cwd, '/usr/lib', 'it starts in its working directory');
  });

  t.test('a volume: the machine\'s directory bound on the image\'s, writable by the program, nosuid and nodev',
    async (t) => {
      const volume = join(dir, 'volume');
      mkdirSync(volume, { mode: 0o700 });
      chownSync(volume, 61999, 61999);
      const r = await launch({ volumes: [{ source: volume, target: '/data' }], args: ['-c', `
open("/data/written", "w").write("by the program")
for line in open("/proc/self/mounts"):
    if line.split()[1] == "/data":
        print("options=" + line.split()[3])
`] });
      t.equal(r.code, 0, r.err);
      t.equal(readFileSync(join(volume, 'written'), 'utf8'), 'by the program', 'written through to the machine\'s');
      t.equal(statSync(join(volume, 'written')).uid, 61999, 'as the extension\'s uid');
      t.match(fields(r.out).options?.split(','), ['rw', 'nosuid', 'nodev'], 'mounted nosuid and nodev');
    });

  t.test('a device: the machine\'s node bound into its /dev at the path it asked for, usable by its uid',
    async (t) => {
      const node = `/dev/appliance-exec-test-${process.pid}`;
      execFileSync('mknod', ['-m', '0600', node, 'c', '1', '3']); // a second /dev/null
      chownSync(node, 61999, 61999); // as the engine hands it over (extension-devices.ts)
      t.teardown(() => rmSync(node, { force: true }));
      const r = await launch({ devices: [{ source: node, target: '/dev/serial/by-id/probe' }], args: ['-c', `
import os
open("/dev/serial/by-id/probe", "w").write("written")
print("dev=" + " ".join(sorted(os.listdir("/dev"))))
`] });
      t.equal(r.code, 0, r.err);
      t.equal(fields(r.out).dev, 'full null random serial urandom zero', 'its /dev: the five, and the one granted');
    });

  t.test('secret files: read-only on /run/secrets, readable by the program\'s uid', async (t) => {
    const secrets = join(dir, 'secrets');
    mkdirSync(secrets, { mode: 0o500 });
    writeFileSync(join(secrets, 'token'), 's3cr3t', { mode: 0o400 });
    chownSync(join(secrets, 'token'), 61999, 61999); // as the engine writes them (extension-secrets.ts)
    chownSync(secrets, 61999, 61999);
    const r = await launch({ secrets, args: ['-c', `
print("token=" + open("/run/secrets/token").read())
try:
    open("/run/secrets/other", "w")
except OSError as e:
    print("write=" + e.strerror)
`] });
    t.equal(r.code, 0, r.err);
    t.equal(fields(r.out).token, 's3cr3t');
    t.equal(fields(r.out).write, 'Read-only file system', 'bound read-only');
  });

  t.test('a program that is not in the image: the launcher says so and fails', async (t) => {
    const r = await launch({ executable: '/usr/bin/nothing' });
    t.equal(r.code, 127);
    t.match(r.err, /ERROR extension probe: running \/usr\/bin\/nothing: execve \/usr\/bin\/nothing: .*ENOENT/);
  });

  t.test('a working directory that is not in the image: the launcher says so and fails', async (t) => {
    const r = await launch({ workingDir: '/srv/www' });
    t.equal(r.code, 1);
    t.match(r.err, /ERROR extension probe: entering \/srv\/www: .*no such file or directory/);
  });

  t.test('no launch in the environment: the launcher says who starts it', async (t) => {
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const c = spawn(exe, ['extension-exec'], { env: {}, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      c.on('exit', (code) => resolve({ code, err }));
    });
    t.equal(r.code, 1);
    t.match(r.err, `${EXTENSION_LAUNCH_ENV} is not set: extensions are started by the engine`);
  });
}
