// The filter program, run by a small interpreter of the BPF instructions it uses (the
// kernel's own verdicts are checked on a real process in plugins/sdk/confine.test.ts).
import t from 'tap';
import { DANGEROUS_SYSCALLS, deniedFor, NAMESPACE_CLONE, seccompProgram } from './seccomp.ts';

/** Runs a classic BPF program over seccomp_data { nr, arch, args[0] }; returns the verdict. */
function run(program: Buffer, nr: number, arch: number, arg0 = 0): number {
  let acc = 0;
  for (let pc = 0; pc < program.length / 8;) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program[pc * 8 + 2]!;
    const jf = program[pc * 8 + 3]!;
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) {
      acc = k === 0 ? nr : k === 4 ? arch : k === 16 ? arg0 : NaN;
      pc++;
    } // LD W ABS
    else if (code === 0x15) pc += 1 + (acc === k ? jt : jf); // JEQ
    else if (code === 0x35) pc += 1 + (acc >= k ? jt : jf); // JGE
    else if (code === 0x45) pc += 1 + ((acc & k) !== 0 ? jt : jf); // JSET
    else if (code === 0x06) return k; // RET
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error('fell off the end');
}

const X86_64 = 0xc000003e;
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const KILL = 0x80000000;
const ENOSYS = 0x00050026;

t.test('the network plugin\'s filter: hostname calls pass, mount and the rest of the list are refused', async (t) => {
  const program = seccompProgram(deniedFor(['sethostname', 'setdomainname']));
  t.equal(run(program, 170, X86_64), ALLOW, 'sethostname');
  t.equal(run(program, 0, X86_64), ALLOW, 'read (not on the list)');
  t.equal(run(program, 41, X86_64), ALLOW, 'socket');
  for (const [name, [nr]] of Object.entries(DANGEROUS_SYSCALLS)) {
    if (name === 'sethostname' || name === 'setdomainname') continue;
    t.equal(run(program, nr, X86_64), EPERM, `${name} (${nr}) refused with EPERM`);
  }
  t.equal(run(program, 0x40000000 + 165, X86_64), EPERM, 'the x32 ABI is refused');
  t.equal(run(program, 165, 0x40000003), KILL, 'another architecture (i386) is killed');
});

t.test('a plugin allowed everything on the list still has the arch and x32 checks', async (t) => {
  const program = seccompProgram(deniedFor(Object.keys(DANGEROUS_SYSCALLS) as never));
  t.equal(program.length / 8, 7);
  t.equal(run(program, NAMESPACE_CLONE.clone3, X86_64), ALLOW, 'unshare allowed: clone3 too');
  t.equal(run(program, 165, X86_64), ALLOW);
  t.equal(run(program, 0x40000001, X86_64), EPERM);
});

t.test('with unshare refused: clone into a new namespace refused, clone3 answered ENOSYS, threads and forks pass',
  async (t) => {
    const program = seccompProgram(deniedFor([]));
    const SIGCHLD = 17;
    const THREAD = 0x3d0f00; // glibc's pthread_create: VM, FS, FILES, SIGHAND, THREAD, SYSVSEM, SETTLS, *_TID
    t.equal(run(program, NAMESPACE_CLONE.clone, X86_64, SIGCHLD), ALLOW, 'fork');
    t.equal(run(program, NAMESPACE_CLONE.clone, X86_64, THREAD), ALLOW, 'a thread');
    t.equal(run(program, NAMESPACE_CLONE.clone, X86_64, 0x10000000 | SIGCHLD), EPERM, 'CLONE_NEWUSER');
    for (const flag of [0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x20000000, 0x40000000]) {
      const name = `namespace flag 0x${flag.toString(16)}`;
      t.equal(run(program, NAMESPACE_CLONE.clone, X86_64, flag | SIGCHLD), EPERM, name);
    }
    t.equal(run(program, NAMESPACE_CLONE.clone3, X86_64), ENOSYS, 'clone3: ENOSYS, the C library falls back to clone');
    t.equal(run(program, 272, X86_64), EPERM, 'unshare itself');
    t.equal(run(program, 0, X86_64), ALLOW, 'read');
    const network = seccompProgram(deniedFor(['sethostname', 'setdomainname']));
    t.equal(run(network, NAMESPACE_CLONE.clone, X86_64, 0x40000000), EPERM, 'the network plugin\'s filter too');
  });
