// seccomp: the filter a plugin runs under, as a classic BPF program (seccomp(2),
// linux/filter.h). Capabilities say what a process may do; some capabilities are broad
// (the network plugin holds CAP_SYS_ADMIN for sethostname, which also allows mount),
// so the syscalls no plugin's job needs are refused by number as well: each plugin is
// allowed back only those of the list its role needs. Another architecture's calling
// convention (x32, i386) is refused outright, as its numbers would slip past the list.
// Leaving one's namespaces is refused whichever way: unshare(2), clone(2) with a namespace
// flag, and clone3(2) (ENOSYS: its flags are out of a filter's reach).

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

/**
 * What refusing `unshare` covers besides it: clone(2) with a namespace flag (a user namespace above all: the way in
 * to most of the kernel's privileged code), and clone3(2), whose flags sit in memory a filter cannot read: answered
 * ENOSYS as container runtimes do, so that the C library falls back to clone(2), whose flags it can.
 */
export const NAMESPACE_CLONE = {
  clone: 56, clone3: 435,
  /** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME is clone3's and unshare's only). */
  flags: 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000,
} as const;

// BPF opcodes (linux/bpf_common.h) and seccomp's (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;
/** offsetof(struct seccomp_data, nr / arch / args[0]): args[0]'s low 32 bits, little-endian. */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

/** One instruction; a jump names its targets by label (classic BPF jumps forward only). */
interface Insn { code: number; k: number; jt?: string; jf?: string; label?: string }

/** The instructions as sock_filter bytes, each label resolved to a forward offset. */
function assemble(program: readonly Insn[]): Buffer {
  const at = new Map(program.flatMap((ins, i) => (ins.label ? [[ins.label, i] as const] : [])));
  const offset = (from: number, label: string | undefined) => {
    if (label === undefined) return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`seccomp: no forward label ${label}`);
    return to - from - 1;
  };
  return Buffer.concat(program.map((ins, i) => {
    const b = Buffer.alloc(8);
    b.writeUInt16LE(ins.code, 0);
    b.writeUInt8(offset(i, ins.jt), 2);
    b.writeUInt8(offset(i, ins.jf), 3);
    b.writeUInt32LE(ins.k >>> 0, 4);
    return b;
  }));
}

/**
 * The program refusing `deny` with EPERM: a native arch check, the x32 range, then one compare per syscall; with
 * `unshare` refused, clone(2) into new namespaces is refused too and clone3(2) answered ENOSYS (NAMESPACE_CLONE).
 */
export function seccompProgram(deny: readonly SyscallName[]): Buffer {
  const numbers = [...new Set(deny.map((n) => DANGEROUS_SYSCALLS[n][0]))].sort((a, b) => a - b);
  const namespaces = deny.includes('unshare');
  return assemble([
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: AUDIT_ARCH_X86_64, jf: 'kill' },
    { code: LD_W_ABS, k: NR },
    { code: JGE_K, k: X32_SYSCALL_BIT, jt: 'deny' },
    ...namespaces ? [
      { code: JEQ_K, k: NAMESPACE_CLONE.clone3, jt: 'enosys' },
      { code: JEQ_K, k: NAMESPACE_CLONE.clone, jt: 'clone' },
    ] : [],
    ...numbers.map((nr) => ({ code: JEQ_K, k: nr, jt: 'deny' })),
    { code: RET_K, k: RET_ALLOW },
    ...namespaces ? [
      { code: LD_W_ABS, k: ARG0_LOW, label: 'clone' },
      { code: JSET_K, k: NAMESPACE_CLONE.flags, jt: 'deny' },
      { code: RET_K, k: RET_ALLOW },
      { code: RET_K, k: RET_ERRNO | ENOSYS, label: 'enosys' },
    ] : [],
    { code: RET_K, k: RET_ERRNO | EPERM, label: 'deny' },
    { code: RET_K, k: RET_KILL_PROCESS, label: 'kill' },
  ]);
}

/** Every dangerous syscall but those `allowed`. */
export function deniedFor(allowed: readonly SyscallName[]): SyscallName[] {
  return (Object.keys(DANGEROUS_SYSCALLS) as SyscallName[]).filter((n) => !allowed.includes(n));
}
