// seccomp: the filter a plugin runs under, as a classic BPF program (seccomp(2),
// linux/filter.h). Capabilities say what a process may do; some capabilities are broad
// (the network plugin holds CAP_SYS_ADMIN for sethostname, which also allows mount),
// so the syscalls no plugin's job needs are refused by number as well: each plugin is
// allowed back only those of the list its role needs. Another architecture's calling
// convention (x32, i386) is refused outright, as its numbers would slip past the list.

/** The syscalls refused unless a plugin needs them, with their x86_64 numbers and why they are dangerous. */
export const DANGEROUS_SYSCALLS = {
  mount: [165, 'mounts over what others trust'], umount2: [166, 'unmounts what others use'],
  pivot_root: [155, 'changes the root'], chroot: [161, 'changes the root'],
  move_mount: [429, 'the new mount API'], open_tree: [428, 'the new mount API'], fsopen: [430, 'the new mount API'],
  fsconfig: [431, 'the new mount API'], fsmount: [432, 'the new mount API'], fspick: [433, 'the new mount API'],
  mount_setattr: [442, 'the new mount API'],
  reboot: [169, 'reboots'], kexec_load: [246, 'replaces the kernel'], kexec_file_load: [320, 'replaces the kernel'],
  init_module: [175, 'loads kernel code'], finit_module: [313, 'loads kernel code'],
  delete_module: [176, 'unloads kernel code'],
  bpf: [321, 'runs programs in the kernel'], perf_event_open: [298, 'reads the kernel and other processes'],
  ptrace: [101, 'takes over other processes'], process_vm_readv: [310, "reads another process's memory"],
  process_vm_writev: [311, "writes another process's memory"],
  swapon: [167, 'swaps to a device'], swapoff: [168, 'swaps to a device'],
  settimeofday: [164, 'sets the clock'], clock_settime: [227, 'sets the clock'],
  clock_adjtime: [305, 'slews the clock'],
  adjtimex: [159, 'slews the clock'],
  sethostname: [170, 'renames the machine'], setdomainname: [171, 'renames the machine'],
  open_by_handle_at: [304, 'opens files past mount boundaries'], acct: [163, 'turns on process accounting'],
  quotactl: [179, 'changes disk quotas'], syslog: [103, 'reads and clears the kernel log'],
  keyctl: [250, 'the kernel keyring'], add_key: [248, 'the kernel keyring'], request_key: [249, 'the kernel keyring'],
  userfaultfd: [323, 'a primitive of kernel exploits'], iopl: [172, 'raw I/O ports'], ioperm: [173, 'raw I/O ports'],
  unshare: [272, 'leaves its namespaces'], setns: [308, 'enters other namespaces'],
  vhangup: [153, 'hangs up the terminal'], lookup_dcookie: [212, 'kernel profiling'],
} as const satisfies Record<string, readonly [number, string]>;

export type SyscallName = keyof typeof DANGEROUS_SYSCALLS;

// BPF opcodes (linux/bpf_common.h) and seccomp's (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
const EPERM = 1;
/** offsetof(struct seccomp_data, nr / arch). */
const NR = 0;
const ARCH = 4;

function insn(code: number, jt: number, jf: number, k: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt16LE(code, 0);
  b.writeUInt8(jt, 2);
  b.writeUInt8(jf, 3);
  b.writeUInt32LE(k >>> 0, 4);
  return b;
}

/** The program refusing `deny` with EPERM: a native arch check, the x32 range, then one compare per syscall. */
export function seccompProgram(deny: readonly SyscallName[]): Buffer {
  const numbers = [...new Set(deny.map((n) => DANGEROUS_SYSCALLS[n][0]))].sort((a, b) => a - b);
  // Layout: [0] load arch, [1] arch? : kill, [2] load nr, [3] x32? : deny, [4..] one test each, allow, deny, kill.
  const n = numbers.length;
  const allowAt = 4 + n;
  const denyAt = allowAt + 1;
  const killAt = denyAt + 1;
  const out: Buffer[] = [
    insn(LD_W_ABS, 0, 0, ARCH),
    insn(JEQ_K, 0, killAt - 2, AUDIT_ARCH_X86_64),
    insn(LD_W_ABS, 0, 0, NR),
    insn(JGE_K, denyAt - 4, 0, X32_SYSCALL_BIT),
    ...numbers.map((nr, i) => insn(JEQ_K, denyAt - (4 + i) - 1, 0, nr)),
    insn(RET_K, 0, 0, RET_ALLOW),
    insn(RET_K, 0, 0, RET_ERRNO | EPERM),
    insn(RET_K, 0, 0, RET_KILL_PROCESS),
  ];
  const program = Buffer.concat(out);
  if (out.length - 1 !== killAt) throw new Error('seccomp program layout is off');
  return program;
}

/** Every dangerous syscall but those `allowed`. */
export function deniedFor(allowed: readonly SyscallName[]): SyscallName[] {
  return (Object.keys(DANGEROUS_SYSCALLS) as SyscallName[]).filter((n) => !allowed.includes(n));
}
