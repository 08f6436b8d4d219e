// hardening: the kernel parameters every machine starts with, each with why. PID 1 writes
// them before any plugin runs (init/boot/pid1.ts: before a link is up); they are also
// the default layer of KernelParamSpec (kernel-param-config.ts), so `get sysctls` shows
// them and a user's spec of the same key wins; a key the kernel does not have (its
// feature is not built in, which is harder still) is left out. docs/security.md lists them.

export interface HardeningParam { key: string; value: string; why: string }

export const HARDENING_PARAMS: readonly HardeningParam[] = [
  { key: 'kernel.kptr_restrict', value: '2', why: 'kernel addresses hidden from every process: they defeat KASLR' },
  { key: 'kernel.dmesg_restrict', value: '1', why: 'only CAP_SYSLOG reads the kernel log, which leaks addresses' },
  { key: 'kernel.unprivileged_bpf_disabled', value: '2', why: 'no BPF programs from unprivileged processes' },
  { key: 'net.core.bpf_jit_harden', value: '2', why: 'constant blinding in JIT-compiled BPF (JIT spraying)' },
  { key: 'kernel.kexec_load_disabled', value: '1', why: 'no replacing the running kernel (upgrades use the loader)' },
  { key: 'kernel.yama.ptrace_scope', value: '2', why: 'only CAP_SYS_PTRACE attaches to a process; no plugin has it' },
  { key: 'kernel.perf_event_paranoid', value: '3', why: 'no perf events for unprivileged processes' },
  { key: 'kernel.sysrq', value: '0', why: 'no magic SysRq from the console' },
  { key: 'kernel.randomize_va_space', value: '2', why: 'full address space layout randomization' },
  { key: 'vm.mmap_min_addr', value: '65536', why: 'no mapping of the page a NULL dereference lands on' },
  { key: 'fs.protected_symlinks', value: '1', why: 'no following of symlinks planted in shared sticky directories' },
  { key: 'fs.protected_hardlinks', value: '1', why: 'no hard links to files the linker cannot read and write' },
  { key: 'fs.protected_fifos', value: '2', why: 'no opening of FIFOs planted in shared sticky directories' },
  { key: 'fs.protected_regular', value: '2', why: 'no opening of files planted in shared sticky directories' },
  { key: 'fs.suid_dumpable', value: '0', why: 'no core dumps of processes that changed privileges' },
  { key: 'dev.tty.ldisc_autoload', value: '0', why: 'no tty line disciplines loaded on an unprivileged request' },
  { key: 'net.ipv4.conf.all.accept_redirects', value: '0', why: 'no routes rewritten by ICMP redirects' },
  { key: 'net.ipv4.conf.default.accept_redirects', value: '0', why: 'no routes rewritten by ICMP redirects' },
  { key: 'net.ipv6.conf.all.accept_redirects', value: '0', why: 'no routes rewritten by ICMPv6 redirects' },
  { key: 'net.ipv6.conf.default.accept_redirects', value: '0', why: 'no routes rewritten by ICMPv6 redirects' },
  { key: 'net.ipv4.conf.all.send_redirects', value: '0', why: 'this machine is no router that redirects' },
  { key: 'net.ipv4.tcp_syncookies', value: '1', why: 'SYN floods do not fill the accept queue' },
];
