import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sysctlPath, withExistingInterfaces, writeSysctls } from './sysctl.ts';

t.test('names map into /proc/sys and cannot leave it', async (t) => {
  t.equal(sysctlPath('net.ipv4.ip_forward'), '/proc/sys/net/ipv4/ip_forward');
  t.equal(sysctlPath('net/ipv4/conf/eth0.100/rp_filter'), '/proc/sys/net/ipv4/conf/eth0.100/rp_filter');
  t.throws(() => sysctlPath('../../etc/passwd'), /invalid kernel parameter name/);
  t.throws(() => sysctlPath('kernel..x'), /invalid kernel parameter name/);
  for (const k of ['kernel/../../../etc/x', 'net/./ipv4', 'net/ipv4/..', 'kernel/..']) {
    t.throws(() => sysctlPath(k), /invalid kernel parameter name/, `${k} stays inside`);
  }
});

t.test('writeSysctls, on a /proc/sys of files: written, absent keys skipped, a refusal reported and the rest go on',
  async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'sysctl-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, 'kernel'));
    writeFileSync(join(root, 'kernel', 'sysrq'), '1\n');
    mkdirSync(join(root, 'kernel', 'kptr_restrict')); // a write the kernel (here: the filesystem) refuses
    writeFileSync(join(root, 'kernel', 'dmesg_restrict'), '0\n');
    const r = writeSysctls([
      { key: 'kernel.sysrq', value: '0' }, { key: 'kernel.kptr_restrict', value: '2' },
      { key: 'kernel.yama.ptrace_scope', value: '2' }, { key: 'kernel.dmesg_restrict', value: '1' },
    ], root);
    t.same(r.absent, ['kernel.yama.ptrace_scope'], 'a key the kernel lacks is skipped');
    t.equal(readFileSync(join(root, 'kernel', 'sysrq'), 'utf8'), '0');
    t.equal(readFileSync(join(root, 'kernel', 'dmesg_restrict'), 'utf8'), '1', 'written after a refusal');
    t.same(r.written, ['kernel.sysrq', 'kernel.dmesg_restrict']);
    t.same(r.failed.map((f) => f.key), ['kernel.kptr_restrict'], 'the refused one is reported');
    t.match(r.failed[0]!.why, /EISDIR/);
  });

t.test('the "all" keys of net.ipv4/ipv6 conf also for each interface there is; other keys as they are', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sysctl-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const link of ['all', 'default', 'lo', 'eth0', 'eth0.100']) {
    mkdirSync(join(root, 'net', 'ipv4', 'conf', link), { recursive: true });
  }
  const got = withExistingInterfaces([
    { key: 'net.ipv4.conf.all.accept_redirects', value: '0' },
    { key: 'net.ipv6.conf.all.accept_redirects', value: '0' }, { key: 'kernel.sysrq', value: '0' },
  ], root).map((p) => `${p.key}=${p.value}`);
  t.same(got, [
    'net.ipv4.conf.all.accept_redirects=0', 'net.ipv6.conf.all.accept_redirects=0', 'kernel.sysrq=0',
    'net/ipv4/conf/eth0/accept_redirects=0', 'net/ipv4/conf/eth0.100/accept_redirects=0',
    'net/ipv4/conf/lo/accept_redirects=0',
  ], 'no ipv6 directory here: nothing for it');
  writeFileSync(join(root, 'net', 'ipv4', 'conf', 'eth0', 'accept_redirects'), '1');
  const w = writeSysctls([{ key: 'net/ipv4/conf/eth0/accept_redirects', value: '0' }, { key: 'x/../y', value: '1' }],
    root);
  t.equal(readFileSync(join(root, 'net', 'ipv4', 'conf', 'eth0', 'accept_redirects'), 'utf8'), '0');
  t.match(w.failed, [{ key: 'x/../y', why: /invalid kernel parameter name/ }], 'a bad name is a failure, not a throw');
});
