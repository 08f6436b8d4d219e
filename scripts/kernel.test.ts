import t from 'tap';
import { readFileSync } from 'node:fs';
import { FRAGMENT, missingOptions } from './kernel.ts';

t.test('missingOptions names what olddefconfig dropped', async (t) => {
  t.same(
    missingOptions(
      'CONFIG_A=y\n# comment\nCONFIG_B=y\nCONFIG_C=m\nCONFIG_D=m\nCONFIG_E=m\n',
      'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\nCONFIG_D=y\n',
    ),
    ['CONFIG_B=y (got not set)', 'CONFIG_D=m (got y)', 'CONFIG_E=m (got not set)'],
  );
});

t.test('the fragment holds each option once, with the features the issue names', async (t) => {
  const lines = readFileSync(FRAGMENT, 'utf8').split('\n').filter((l) => l.startsWith('CONFIG_'));
  const names = lines.map((l) => l.split('=')[0]);
  t.equal(new Set(names).size, names.length, 'no duplicates');
  for (const need of [
    'VIRTIO_PCI', 'VIRTIO_NET', 'VIRTIO_BLK', 'VIRTIO_CONSOLE', 'HW_RANDOM_VIRTIO', 'EXT4_FS', 'VFAT_FS', 'ISO9660_FS',
    'SQUASHFS', 'OVERLAY_FS', 'CGROUPS', 'NAMESPACES', 'BPF_SYSCALL', 'NET', 'PACKET', 'ACPI', 'FW_CFG_SYSFS',
    'DEVTMPFS', 'RTC_CLASS', 'INPUT_EVDEV', 'ADVISE_SYSCALLS', 'MEMBARRIER', 'FUTEX', 'RD_ZSTD',
  ]) {
    t.ok(names.includes(`CONFIG_${need}`), need);
  }
});
