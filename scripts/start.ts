// start: builds what is stale, boots the appliance in QEMU with the console on this
// terminal. Ctrl-C presses the ACPI power button (a clean shutdown); a second Ctrl-C
// quits QEMU at once.
import { join } from 'node:path';
import { launch } from '../qemu/launch.ts';
import { build } from './build.ts';
import { OUT } from './lib/paths.ts';

const HELP = `usage: npm start -- [options]

Builds out/ when stale and boots it in QEMU (TCG) with the serial console here.
Ctrl-C powers the VM down cleanly (ACPI power button); press it twice to quit QEMU.

options:
  --memory MiB        guest memory (default 512)
  --kvm               use KVM instead of TCG (may hang on some hosts)
  --append "k=v ..."  extra kernel command line
  --hostfwd H:G       forward host 127.0.0.1:H to guest port G (repeatable)
  --no-build          boot what is in out/ as it is
  --help              this text
`;

function parseArgs(argv: string[]) {
  const o = {
    memoryMiB: 512, kvm: false, append: [] as string[], hostfwd: [] as { hostPort: number; guestPort: number }[],
    build: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => { const v = argv[++i]; if (v === undefined) throw new Error(`${a} needs a value`); return v; };
    if (a === '--help' || a === '-h') { process.stdout.write(HELP); process.exit(0); }
    else if (a === '--memory') {
      o.memoryMiB = Number(value());
      if (!(o.memoryMiB >= 64)) throw new Error(`--memory: need at least 64 MiB, got "${argv[i]}"`);
    }
    else if (a === '--kvm') o.kvm = true;
    else if (a === '--append') o.append.push(...value().split(/\s+/).filter(Boolean));
    else if (a === '--hostfwd') {
      const v = value(); const m = /^(\d+):(\d+)$/.exec(v);
      if (!m) throw new Error(`--hostfwd: expected HOSTPORT:GUESTPORT, got "${v}"`);
      o.hostfwd.push({ hostPort: Number(m[1]), guestPort: Number(m[2]) });
    } else if (a === '--no-build') o.build = false;
    else throw new Error(`unknown option "${a}" (see --help)`);
  }
  return o;
}

let opts: ReturnType<typeof parseArgs>;
try { opts = parseArgs(process.argv.slice(2)); } catch (e) {
  process.stderr.write(`start: ${(e as Error).message}\n`); process.exit(2);
}

if (opts.build) await build();
const { readFileSync } = await import('node:fs');
const vm = launch({
  kernel: join(OUT, 'vmlinuz'), initrd: join(OUT, 'initramfs.cpio.zst'),
  cmdline: readFileSync(join(OUT, 'cmdline'), 'utf8'), append: opts.append,
  memoryMiB: opts.memoryMiB, accel: opts.kvm ? 'kvm' : 'tcg', consoleToTerminal: true,
  consoleFile: join(OUT, 'console.log'), hostfwd: opts.hostfwd,
  hostAccess: true, // the user's own VM may reach their network
});
process.stderr.write(`[start] QEMU pid ${vm.process.pid}; console also in out/console.log; Ctrl-C powers off\n`);
let presses = 0;
process.on('SIGINT', () => {
  presses++;
  if (presses === 1) {
    process.stderr.write('\n[start] powering down (ACPI power button); Ctrl-C again to quit QEMU now\n');
    vm.powerdown(30_000).catch((e: Error) => { process.stderr.write(`[start] ${e.message}\n`); vm.kill(); });
  } else vm.kill();
});
const exit = await vm.exited;
process.stderr.write(`[start] QEMU exited (code ${exit.code}${exit.signal ? `, signal ${exit.signal}` : ''})\n`);
process.exit(exit.code ?? 1);
