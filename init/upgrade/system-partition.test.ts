// Finding a slot's SYSTEM partition in a sysfs laid out as the kernel lays it out (a disk's partitions are its
// subdirectories, /sys/class/block links to each, the GPT name in each partition's uevent): on the ESP's disk only,
// none on a disk made before the disk form, and a refusal to guess between two of one name or to use a read-only one.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findSystemPartition } from './system-partition.ts';

const root = mkdtempSync(join(tmpdir(), 'system-partition-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

/** A sysfs and /dev holding `disks`, each with its partitions' GPT names (in table order, numbered from 1). */
function machine(name: string, disks: Record<string, string[]>, readOnly: string[] = []) {
  const sys = join(root, name, 'class', 'block');
  const dev = join(root, name, 'dev');
  const devices = join(root, name, 'devices');
  mkdirSync(sys, { recursive: true });
  mkdirSync(dev, { recursive: true });
  const device = (dir: string, kernelName: string, sectors: number, uevent: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'size'), String(sectors));
    writeFileSync(join(dir, 'dev'), '254:0');
    writeFileSync(join(dir, 'ro'), readOnly.includes(kernelName) ? '1' : '0');
    writeFileSync(join(dir, 'uevent'), uevent);
    symlinkSync(dir, join(sys, kernelName));
    writeFileSync(join(dev, kernelName), '');
  };
  for (const [disk, parts] of Object.entries(disks)) {
    device(join(devices, disk), disk, 2 << 20, `MAJOR=254\nMINOR=0\nDEVNAME=${disk}\nDEVTYPE=disk\n`);
    parts.forEach((label, i) => {
      const p = `${disk}${i + 1}`;
      device(join(devices, disk, p), p, (i + 1) * 2048, `MAJOR=254\nMINOR=${i + 1}\nDEVNAME=${p}\nDEVTYPE=partition\n`
        + `PARTN=${i + 1}\nPARTNAME=${label}\n`);
      writeFileSync(join(devices, disk, p, 'partition'), String(i + 1));
    });
  }
  return { sys, dev };
}

const LAYOUT = ['BIOS', 'EFI', 'STATE', 'EPHEMERAL', 'SYSTEM-A', 'SYSTEM-B'];

t.test('the slot\'s partition on the disk that holds the ESP, not one of that name on another disk', async (t) => {
  const { sys, dev } = machine('two-disks', { vda: LAYOUT, vdb: LAYOUT });
  t.same(findSystemPartition(join(dev, 'vdb2'), 'B', sys, dev),
    { devPath: join(dev, 'vdb6'), sizeBytes: 6 * 2048 * 512 });
  t.same(findSystemPartition(join(dev, 'vda2'), 'A', sys, dev),
    { devPath: join(dev, 'vda5'), sizeBytes: 5 * 2048 * 512 });
});

t.test('a disk made before the disk form: none', async (t) => {
  const { sys, dev } = machine('old', { sda: LAYOUT.slice(0, 4) });
  t.equal(findSystemPartition(join(dev, 'sda2'), 'B', sys, dev), undefined);
});

t.test('refusals: the ESP not listed, two of one name, a read-only one', async (t) => {
  const { sys, dev } = machine('odd', { vda: [...LAYOUT, 'SYSTEM-B'] }, ['vda5']);
  t.throws(() => findSystemPartition(join(dev, 'nvme0n1p2'), 'B', sys, dev),
    /nvme0n1p2 \(the ESP\) is not a partition this system lists/);
  t.throws(() => findSystemPartition(join(dev, 'vda2'), 'B', sys, dev),
    /2 partitions named SYSTEM-B on vda: refusing to guess/);
  t.throws(() => findSystemPartition(join(dev, 'vda2'), 'A', sys, dev), /vda5 \(SYSTEM-A\) is read-only/);
});
