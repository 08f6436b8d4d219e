// start: builds what is stale, boots the appliance in QEMU with the console on this
// terminal. Ctrl-C presses the ACPI power button (a clean shutdown); a second Ctrl-C
// quits QEMU at once. The VM gets a machine config through QEMU fw_cfg: by default one
// holding development API secrets made on the first start (out/dev/), with a cosictl
// config file whose context reaches the VM through the forwarded port.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiCaDocument, generateSecrets, secretsFromYaml, secretsToYaml } from '../machinery/pki/secrets.ts';
import { contextOfSecrets, writeConfigFile } from '../cli/config.ts';
import { launch } from '../qemu/launch.ts';
import { build } from './build.ts';
import { OUT } from './lib/paths.ts';
import { untilPoweredOff } from './lib/interactive-vm.ts';

const HELP = `usage: npm start -- [options]

Builds out/ when stale and boots it in QEMU (TCG) with the serial console here.
Ctrl-C powers the VM down cleanly (ACPI power button); press it twice to quit QEMU.

options:
  --config FILE       the machine config, given through QEMU fw_cfg (default: out/dev/machine.yaml,
                      made on the first start with development API secrets in out/dev/secrets.yaml;
                      out/dev/cosictl.yaml has the matching cosictl context)
  --no-config         no config: the machine starts in maintenance mode (cosictl --insecure)
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
    build: true, config: undefined as string | undefined, noConfig: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--help' || a === '-h') {
      process.stdout.write(HELP);
      process.exit(0);
    }
    else if (a === '--memory') {
      o.memoryMiB = Number(value());
      if (!(o.memoryMiB >= 64)) throw new Error(`--memory: need at least 64 MiB, got "${argv[i]}"`);
    }
    else if (a === '--kvm') o.kvm = true;
    else if (a === '--append') o.append.push(...value().split(/\s+/).filter(Boolean));
    else if (a === '--hostfwd') {
      const v = value();
      const m = /^(\d+):(\d+)$/.exec(v);
      if (!m) throw new Error(`--hostfwd: expected HOSTPORT:GUESTPORT, got "${v}"`);
      o.hostfwd.push({ hostPort: Number(m[1]), guestPort: Number(m[2]) });
    } else if (a === '--no-build') o.build = false;
    else if (a === '--config') o.config = value();
    else if (a === '--no-config') o.noConfig = true;
    else throw new Error(`unknown option "${a}" (see --help)`);
  }
  return o;
}

let opts: ReturnType<typeof parseArgs>;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`start: ${(e as Error).message}\n`);
  process.exit(2);
}

/** out/dev: development secrets (made once), the machine config holding their CA, a cosictl context. */
function devConfig(hostPort: number): string {
  const dir = join(OUT, 'dev');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secretsFile = join(dir, 'secrets.yaml');
  if (!existsSync(secretsFile)) writeFileSync(secretsFile, secretsToYaml(generateSecrets()), { mode: 0o600 });
  const s = secretsFromYaml(readFileSync(secretsFile, 'utf8'), secretsFile);
  const machine = join(dir, 'machine.yaml');
  const header = '# development machine config (npm start): the API CA of out/dev/secrets.yaml\n';
  writeFileSync(machine, header + apiCaDocument(s), { mode: 0o600 });
  writeConfigFile(join(dir, 'cosictl.yaml'),
    { context: 'dev', contexts: { dev: contextOfSecrets(s, 'admin', `127.0.0.1:${hostPort}`) } });
  return machine;
}

if (opts.build) await build();
const apiForward = opts.hostfwd.find((f) => f.guestPort === 50000)?.hostPort ?? 50000;
const config = opts.noConfig ? undefined : opts.config ?? devConfig(apiForward);
if (config && !existsSync(config)) {
  process.stderr.write(`start: --config ${config}: no such file\n`);
  process.exit(2);
}
const vm = launch({
  kernel: join(OUT, 'vmlinuz'), initrd: join(OUT, 'initramfs.cpio.zst'),
  cmdline: readFileSync(join(OUT, 'cmdline'), 'utf8'), append: opts.append,
  memoryMiB: opts.memoryMiB, accel: opts.kvm ? 'kvm' : 'tcg', consoleToTerminal: true,
  consoleFile: join(OUT, 'console.log'), hostfwd: opts.hostfwd,
  ...(config ? { fwcfg: [{ name: 'opt/dev.appliance/config', file: config }] } : {}),
  hostAccess: true, // the user's own VM may reach their network
  noReboot: false, // `cosictl reboot` (the README's example) reboots it; tests keep -no-reboot to catch panics
});
process.stderr.write(`[start] QEMU pid ${vm.process.pid}; console also in out/console.log; Ctrl-C powers off\n`);
if (!opts.config && !opts.noConfig) {
  process.stderr.write(`[start] cosictl: COSICTL_CONFIG=out/dev/cosictl.yaml out/cosictl get versions`
    + `${opts.hostfwd.some((f) => f.guestPort === 50000) ? '' : ' (boot with --hostfwd 50000:50000)'}\n`);
}
process.exit(await untilPoweredOff(vm, 'start'));
