// The devices an extension is given, on this host's real /dev (root, as PID 1 is): a node made for the test is
// handed to the extension's uid and given back; what is not granted, a block device, a link's target and a device
// that is not there yet are each named, the last as one a later try may find.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdDevices, releaseDevices } from './extension-devices.ts';
import { ExtensionProblems } from './types.ts';

if (process.getuid?.() !== 0) {
  t.plan(0, 'needs root (mknod, chown)');
} else {
  const node = `/dev/appliance-test-${process.pid}`;
  execFileSync('mknod', ['-m', '0600', node, 'c', '1', '3']); // a second /dev/null, root's
  t.teardown(() => rmSync(node, { force: true }));
  const dir = mkdtempSync(join(tmpdir(), 'devices-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  t.test('a granted character device: the extension\'s uid owns it while it runs, then it is given back', async (t) => {
    const held = holdDevices({ wanted: [node], granted: [node, '/dev/ttyS1'], uid: 61_005 });
    t.same(held, [{ source: node, target: node, was: { uid: 0, gid: 0 } }]);
    t.same([statSync(node).uid, statSync(node).gid], [61_005, 61_005]);
    t.same(releaseDevices(held), []);
    t.same([statSync(node).uid, statSync(node).gid], [0, 0], 'given back');
    t.same(releaseDevices([{ source: '/dev/gone-meanwhile', target: '/dev/x', was: { uid: 0, gid: 0 } }]), [],
      'a device unplugged meanwhile: nothing to give back');
  });

  t.test('refused: not granted, a block device (through a link), not a device; missing: tried again', async (t) => {
    const link = join(dir, 'disk');
    symlinkSync('/dev/loop0', link);
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as ExtensionProblems;
      }
      return undefined;
    };
    const final = err(() => holdDevices({ wanted: [node, '/dev/ttyS1', link, '/dev/shm'], uid: 61_005,
      granted: ['/dev/ttyS1', link, '/dev/shm'] }));
    t.same(final?.problems, [
      `devices: ${node}: not granted (an admin lists it in the ExtensionSpec's devices)`,
      ...(statSync('/dev/ttyS1', { throwIfNoEntry: false }) ? [] : ['devices: /dev/ttyS1: the machine has no such '
        + 'device (yet)']),
      `devices: ${link} (/dev/loop0): a block device: never given to an extension (it is the whole disk)`,
      'devices: /dev/shm: no device node',
    ]);
    t.equal(final?.final, true, 'the grant and the node are what they are: final');
    t.equal(statSync(node).uid, 0, 'nothing handed over when one is refused');
    const later = err(() => holdDevices({ wanted: ['/dev/ttyUSB7'], granted: ['/dev/ttyUSB7'], uid: 61_005 }));
    t.same(later?.problems, ['devices: /dev/ttyUSB7: the machine has no such device (yet)']);
    t.equal(later?.final, false, 'a device plugged in later: tried again');
  });
}
