// Confinement on the real kernel (root): the built executable confines itself as a
// plugin and tries mount(2). The network plugin holds CAP_SYS_ADMIN (for sethostname),
// which allows mount: its seccomp filter must refuse it, and without the filter the same
// mount succeeds. Plugins that need no host mounts run in a mount namespace of their own.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileStaticC } from '../../image/stage0/build-stage0.ts';
import { artifacts } from '../../qemu/artifacts.ts';
import { heldCapabilities } from '../../machinery/sys/capabilities.ts';

const probe = (...args: string[]) => JSON.parse(execFileSync(artifacts().exe, ['test-confine-probe', ...args], {
  encoding: 'utf8', env: { ...process.env, APPLIANCE_NATIVE: new URL('../../native/build/Release/appliance_native.node',
    import.meta.url).pathname },
})) as { mount: string; seccomp: string; capEff: string; noNewPrivs: string; mountNamespace: string; ran?: string;
  thread: string };

const root = process.getuid?.() === 0;
t.test('the network plugin: CAP_SYS_ADMIN kept, mount refused by the filter alone', { skip: !root && 'needs root' },
  async (t) => {
    const confined = probe('network');
    t.equal(confined.mount, 'EPERM', 'mount(2) answers EPERM');
    t.equal(confined.seccomp, '2', 'seccomp filter mode');
    t.equal(BigInt(`0x${confined.capEff}`) & (1n << 21n), 1n << 21n, 'CAP_SYS_ADMIN is effective');
    t.equal(confined.noNewPrivs, '1');
    const bare = probe('network', '--without-filter');
    t.equal(bare.mount, 'ok', 'without the filter the same mount succeeds: the filter is what refuses it');
    t.not(confined.mountNamespace, readlinkSync('/proc/self/ns/mnt'), 'a mount namespace of its own');
  });

t.test('the platform plugin may mount its seeds, in a namespace nobody else sees', { skip: !root && 'needs root' },
  async (t) => {
    const p = probe('platform');
    t.equal(p.mount, 'ok');
    t.equal(p.seccomp, '2');
    t.not(p.mountNamespace, readlinkSync('/proc/self/ns/mnt'));
  });

t.test('the issue plugin may do none of it', { skip: !root && 'needs root' }, async (t) => {
  const p = probe('issue');
  t.equal(p.mount, 'EPERM');
  t.equal(p.capEff, '0000000000000000');
});

t.test('no plugin leaves its namespaces by clone: a namespace flag refused, clone3 ENOSYS; it still forks and spawns',
  { skip: !root && 'needs root' }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'clone-probe-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const program = join(dir, 'clone-probe');
    compileStaticC(fileURLToPath(new URL('fixtures/clone-probe.c', import.meta.url)), program);
    // The network plugin holds CAP_SYS_ADMIN: without the filter, each namespace is its for the asking.
    t.equal(probe('network', '--without-filter', '--run', program).ran,
      'fork=ok\nclone-newuser=ok\nclone-newnet=ok\nclone3=ok\n', 'without the filter');
    for (const plugin of ['network', 'issue']) {
      const p = probe(plugin, '--run', program);
      t.equal(p.thread, 'ok', `${plugin}: a thread started under the filter runs`);
      t.equal(p.ran, 'fork=ok\nclone-newuser=EPERM\nclone-newnet=EPERM\nclone3=ENOSYS\n',
        `${plugin}: spawned by a confined process (glibc fell back from clone3), which forks but makes no namespace`);
    }
  });

t.test('the capabilities a process holds are read from CapPrm', async (t) => {
  t.same([...heldCapabilities('CapInh:\t0000000000000000\nCapPrm:\t0000000001200000\n')], [21, 24]);
  t.same([...heldCapabilities('CapPrm:\t000001fffeffffff\n')].includes(24), false, 'a container without 24');
  t.throws(() => heldCapabilities('Name:\tx\n'), /no CapPrm line/);
});
