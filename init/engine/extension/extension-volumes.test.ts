// An extension's volumes on real directories of this host (owned by the extension's uid: the test runs as root, as
// PID 1 does), with the kernel's project quotas stood in for by a table (this host's kernel mounts no ext4 with
// quotas; qemu/appliance.test.ts reads the real ones back from a booted machine): what backs them, their
// directories, owners and project ids kept from one start to the next, their sizes, and a purge.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  prepareVolumes, purgeVolumes, volumeBacking, volumeUsage, type ProjectQuotas, type VolumeBacking,
} from './extension-volumes.ts';

/** Project ids by path and limits by id, as the filesystem would keep them. */
function quotaTable() {
  const projects = new Map<string, number>();
  const limits = new Map<number, number>();
  const q: ProjectQuotas = {
    projectOf: (p) => projects.get(p) ?? 0,
    setProject: (p, id) => void projects.set(p, id),
    setProjectLimit: (_p, id, bytes) => void limits.set(id, bytes),
    projectUsage: (_p, id) => ({ usedBytes: id * 4096, limitBytes: limits.get(id) ?? 0 }),
  };
  return { q, projects, limits };
}

t.test('what backs the volumes: memory, a disk without project quotas, a disk with them', async (t) => {
  const { q } = quotaTable();
  const mounts = (line: string) => `rootfs / rootfs rw 0 0\nproc /proc proc rw 0 0\n${line}`;
  const inRam = volumeBacking(mounts(''), '/var/lib/extensions', q);
  t.equal(inRam.persistent, false);
  t.match(inRam.note,
    /not persistent: \/var\/lib\/extensions is in memory \(rootfs filesystem; the machine has no EPHEMERAL/);
  const old = volumeBacking(mounts('/dev/vda4 /var ext4 rw,nosuid,nodev,relatime 0 0\n'), '/var/lib/extensions', q);
  t.same({ ...old, note: undefined }, { persistent: true, note: undefined });
  t.match(old.note, /size not enforced: \/var \(\/dev\/vda4\) keeps no project quotas/);
  const now = volumeBacking(mounts('/dev/vda4 /var ext4 rw,nosuid,nodev,relatime,prjquota 0 0\n'),
    '/var/lib/extensions', q);
  t.same(now, { persistent: true, quotas: q });
  t.equal(volumeBacking(mounts('/dev/vda4 /variable ext4 rw,prjquota 0 0\n'), '/var/lib/extensions', q).persistent,
    false, 'a mount whose path only begins the same is not the one holding it');
});

t.test('volumes made once, owned by the uid, with project ids of their own kept from start to start', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'volumes-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const { q, projects, limits } = quotaTable();
  const backing: VolumeBacking = { persistent: true, quotas: q };
  const volumes = [{ name: 'data', path: '/srv/data', sizeBytes: 100 << 20 }, { name: 'cache', path: '/cache' }];
  const first = prepareVolumes({ root, name: 'web', uid: 61_003, volumes, backing });
  t.same(first.problems, []);
  t.same(first.mounts, [{ source: join(root, 'web', 'data'), target: '/srv/data' },
    { source: join(root, 'web', 'cache'), target: '/cache' }]);
  t.same(first.statuses, [
    { name: 'data', path: '/srv/data', dir: join(root, 'web', 'data'), persistent: true, note: '', usedBytes: 4096,
      sizeBytes: 100 << 20 },
    { name: 'cache', path: '/cache', dir: join(root, 'web', 'cache'), persistent: true, note: '', usedBytes: 8192 },
  ]);
  const st = statSync(join(root, 'web', 'data'));
  t.same([st.uid, st.gid, st.mode & 0o777], [61_003, 61_003, 0o700], 'the extension\'s own, no one else\'s');
  t.same([statSync(join(root, 'web')).uid, statSync(join(root, 'web')).mode & 0o777], [0, 0o755],
    'the directory holding them is root\'s: the extension cannot swap a volume for a link');
  t.same([...limits], [[1, 100 << 20], [2, 0]], 'a size is a hard limit; no size clears one');
  writeFileSync(join(root, 'web', 'data', 'kept'), 'x');
  const other = prepareVolumes({ root, name: 'db', uid: 61_004, volumes: [{ name: 'data', path: '/d' }], backing });
  t.equal(projects.get(other.statuses[0]!.dir), 3, 'another extension\'s volume: the next id');
  const again = prepareVolumes({ root, name: 'web', uid: 61_003, volumes: [volumes[0]!], backing });
  t.equal(projects.get(again.statuses[0]!.dir), 1, 'started again: the id it has');
  t.ok(existsSync(join(root, 'web', 'data', 'kept')), 'and its files');
  t.equal(volumeUsage(again.statuses, backing)[0]!.usedBytes, 4096, 'usage read again from its project');

  writeFileSync(join(root, 'web', 'blocked'), 'a file where a volume goes');
  const blocked = prepareVolumes({ root, name: 'web', uid: 61_003, backing,
    volumes: [{ name: 'blocked', path: '/b' }] });
  t.same(blocked.problems, [`volume blocked: ${join(root, 'web', 'blocked')} is no directory`]);

  t.same(purgeVolumes(root, 'web', backing).sort(), ['blocked', 'cache', 'data']);
  t.notOk(existsSync(join(root, 'web')), 'purged: gone for good');
  t.same(limits.get(1), 0, 'and its limits cleared');
  t.same(purgeVolumes(root, 'web', backing), [], 'nothing left to purge: nothing to say');
});

t.test('without project quotas: a size is noted as not enforced; in memory, every volume says it does not persist',
  async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'volumes-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const disk = prepareVolumes({ root, name: 'web', uid: 61_000, backing: { persistent: true, note: 'size not x' },
      volumes: [{ name: 'a', path: '/a', sizeBytes: 1 << 20 }, { name: 'b', path: '/b' }] });
    t.same(disk.statuses.map((s) => [s.note, s.sizeBytes, s.usedBytes]), [['size not x', undefined, undefined],
      ['', undefined, undefined]]);
    const ram = prepareVolumes({ root, name: 'kv', uid: 61_001, backing: { persistent: false, note: 'not persistent' },
      volumes: [{ name: 'a', path: '/a' }] });
    t.same(ram.statuses.map((s) => [s.persistent, s.note]), [[false, 'not persistent']]);
    t.same(prepareVolumes({ root, name: 'none', uid: 61_002, backing: { persistent: true }, volumes: [] }),
      { mounts: [], statuses: [], problems: [] });
    t.notOk(existsSync(join(root, 'none')), 'no volumes: nothing made');
  });
