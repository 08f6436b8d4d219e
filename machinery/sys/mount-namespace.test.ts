// mount-namespace: a child spawned through it lives in a mount namespace of its own, with
// the machine's later mounts coming in (slave) and its own staying out; the spawning
// thread is back in its namespace afterwards. On the real kernel (root).
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { spawnInOwnMountNamespace } from './mount-namespace.ts';

const n = native();
/** What a child node writes to stdout; `progress` hears it so far at each write. */
const output = (args: string[], progress?: (text: string) => void) => new Promise<string>((resolve, reject) => {
  const c = spawnInOwnMountNamespace(n, () => spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  c.stdout!.on('data', (d: Buffer) => {
    out += d;
    progress?.(out);
  });
  c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}`))));
});

t.test('the child is born in a namespace of its own; this thread comes back to its own', async (t) => {
  // Tests run in a private mount namespace of their own, so the host's mounts are never touched.
  n.unshareMounts();
  const mine = readlinkSync('/proc/thread-self/ns/mnt');
  // Both alive at once: a namespace's inode number is reused once its last process is gone.
  const ns = ['-e', 'process.stdout.write(require("fs").readlinkSync("/proc/self/ns/mnt")); setTimeout(() => {}, 800)'];
  const [one, two] = await Promise.all([output(ns), output(ns)]);
  t.match(one, /^mnt:\[\d+\]$/);
  t.not(one, mine, 'another namespace');
  t.equal(readlinkSync('/proc/thread-self/ns/mnt'), mine, 'the spawning thread is back');
  t.not(two, one, 'each child a namespace of its own');
});

t.test('mounts made later by the machine reach the child; the child\'s propagation is slave', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mntns-'));
  n.mount('none', '/', '', (1 << 14) | (1 << 20)); // MS_REC | MS_SHARED in this test's namespace
  // The child says when it has looked (a fixed wait raced a slow start on a loaded machine); then it watches for
  // the mount for up to 10 s.
  const script = `
    const fs = require('fs');
    const seen = () => fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(${JSON.stringify(dir)});
    const before = seen();
    process.stdout.write('looked\\n');
    const until = Date.now() + 10000;
    const check = () => {
      if (!seen() && Date.now() < until) return setTimeout(check, 50);
      process.stdout.write(JSON.stringify({ before, after: seen(),
        master: fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n')
          .find((l) => l.split(' ')[4] === '/')?.includes('master:') }));
    };
    check();
  `;
  let looked: () => void = () => undefined;
  const lookedOnce = new Promise<void>((r) => {
    looked = r;
  });
  const pending = output(['-e', script], (text) => {
    if (text.includes('looked\n')) looked();
  });
  await lookedOnce;
  n.mount('tmpfs', dir, 'tmpfs', 0, 'size=1m');
  t.teardown(() => n.umount2(dir));
  const report = (await pending).replace('looked\n', '');
  const seen = JSON.parse(report) as { before: boolean; after: boolean; master: boolean };
  t.same(seen, { before: false, after: true, master: true });
});
