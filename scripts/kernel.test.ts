import t from 'tap';
import { readFileSync } from 'node:fs';
import { FRAGMENT } from './kernel.ts';

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

t.test('the built kernel is hardened: seccomp for plugins, Yama, canaries, KASLR, SLUB freelist checks', async (t) => {
  const { buildKernel } = await import('./kernel.ts');
  const config = readFileSync((await buildKernel()).config, 'utf8'); // a cache hit: the build made it
  const value = (name: string) => new RegExp(`^CONFIG_${name}=(\\S+)$`, 'm').exec(config)?.[1] ?? 'not set';
  for (const on of [
    'SECCOMP', 'SECCOMP_FILTER', 'SECURITY_YAMA', 'SECURITY_DMESG_RESTRICT', 'STACKPROTECTOR_STRONG',
    'RANDOMIZE_BASE', 'RANDOMIZE_MEMORY', 'HARDENED_USERCOPY', 'FORTIFY_SOURCE', 'SLAB_FREELIST_RANDOM',
    'SLAB_FREELIST_HARDENED', 'SHUFFLE_PAGE_ALLOCATOR', 'BUG_ON_DATA_CORRUPTION', 'STRICT_KERNEL_RWX',
    'STRICT_MODULE_RWX', 'LEGACY_VSYSCALL_NONE', 'BPF_UNPRIV_DEFAULT_OFF', 'INIT_STACK_ALL_ZERO',
  ]) t.equal(value(on), 'y', `${on} on`);
  // What is not built in cannot be abused: raw memory and ports, kexec, core dumps of the kernel, legacy ABIs.
  for (const off of [
    'DEVMEM', 'DEVPORT', 'PROC_KCORE', 'KEXEC', 'KEXEC_FILE', 'HIBERNATION', 'MODIFY_LDT_SYSCALL', 'USERFAULTFD',
    'BINFMT_MISC', 'IA32_EMULATION', 'X86_X32_ABI', 'MAGIC_SYSRQ', 'COMPAT_BRK', 'X86_VSYSCALL_EMULATION',
  ]) t.equal(value(off), 'not set', `${off} off`);
});
