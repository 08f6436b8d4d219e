// api-machine: boots the image with the COSI API forwarded to a free host port and
// drives it with the built cosictl: what the whole-system tests and the benchmarks share.
// Every machine talks mutual TLS: the run's CA reaches the guest in its machine config
// (QEMU fw_cfg by default), and cosictl uses a context with the run's admin certificate.
// No tap here, so benchmarks can use it; tests take qemu/api-vm.ts, which adds tap's hooks.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_RE } from '../init/boot/ready-line.ts';
import { testSecrets } from '../init/engine/serve-harness.ts';
import type { ChannelTls } from '../cosi/remote/grpc/client.ts';
import type { Role } from '../machinery/model/access.ts';
import { apiCaDocument } from '../machinery/pki/secrets.ts';
import { PLUGINS } from '../plugins/index.ts';
import { artifacts } from './artifacts.ts';
import { freePort } from './free-port.ts';
import { launch, slirpStaticIp, type Vm, type VmOptions } from './launch.ts';
import { runProgram, type Ran } from '../scripts/lib/run-program.ts';

export type CliResult = Ran;

/** The plugins every machine of the image runs (the test-only ones run only when asked): what awaitPlugins waits on. */
export const IMAGE_PLUGINS: readonly string[] = PLUGINS.filter((p) => !p.testOnly).map((p) => p.name);

/** What `cosictl get plugins -o json` prints, as far as the tests read it. */
interface PluginList { items: { metadata: { id: string }; spec: { state: string } }[] }

export interface ApiVm {
  vm: Vm;
  endpoint: string;
  cosictl: string;
  /** A cosictl config file whose current context is this machine, as admin. */
  cosictlConfig: string;
  /** TLS of a client of `role` (default admin) of this machine. */
  tls(role?: Role): ChannelTls;
  /** cosictl as admin over mutual TLS (killed after `timeoutMs`, default a minute). */
  run(args: string[], input?: string, timeoutMs?: number): Promise<CliResult>;
  /** cosictl --insecure: what anyone can do while the machine is in maintenance mode. */
  runInsecure(args: string[], input?: string): Promise<CliResult>;
  /** Runs `args` until the output matches `re` (or `ms` pass); returns the last result. */
  poll(args: string[], re: RegExp, ms?: number): Promise<CliResult>;
  /** poll, with --insecure. */
  pollInsecure(args: string[], re: RegExp, ms?: number): Promise<CliResult>;
  /**
   * Waits until these plugins run (default three minutes), else throws with the states they are in: the
   * second wave starts once the first runs, and on a loaded TCG host a few Node processes
   * starting at once take half a minute or more.
   */
  awaitPlugins(names: readonly string[], ms?: number): Promise<void>;
}

export interface ApiVmOptions {
  /**
   * How the machine gets the run's CA: in its machine config through QEMU fw_cfg (default),
   * or not at all (the test gives it another way: another config source, or the API in maintenance mode).
   */
  secrets?: 'fw_cfg' | 'none';
  /**
   * Called with the launched machine before it is waited for (tests hook their failure reports here), and its
   * cosictl (what a user types right after starting a machine).
   */
  onLaunch?: (vm: Vm, run: ApiVm['run']) => void;
  /** false: return at the ready line, not once the API answers (a test of a machine that refuses its clients). */
  awaitApi?: boolean;
}

/** What on a console explains a failure: plugin warnings and errors, OOM kills, panics. */
export const TELLING = /WARN|ERROR|Out of memory|Kernel panic|exited \(|event loop:/;

/** The machine config document that gives a guest the run's CA (for tests that pass their config another way). */
export const TEST_CA_DOCUMENT = (): string => apiCaDocument(testSecrets());

/**
 * Boots and waits until the API answers through the forwarded port. The guest's
 * address comes from `ip=` on the command line (static, default) or from QEMU's DHCP
 * server (dhcp); either way it is the network plugin that configures it.
 */
export async function bootApiMachine(
  extra: Partial<VmOptions> = {}, addressing: 'static' | 'dhcp' = 'static', o: ApiVmOptions = {},
): Promise<ApiVm> {
  const a = artifacts();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'api-vm-'));
  const secrets = testSecrets();
  const fwcfg = [...(extra.fwcfg ?? [])];
  if ((o.secrets ?? 'fw_cfg') === 'fw_cfg') {
    const config = join(dir, 'machine.yaml');
    writeFileSync(config, TEST_CA_DOCUMENT());
    fwcfg.push({ name: 'opt/dev.appliance/config', file: config });
  }
  const vm = launch({
    // The three test plugins make nine Node processes: in 256 MiB the API stalled past cosictl's 5 s connect
    // timeout now and then (executable pages dropped and decompressed again), so those machines get 320.
    kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline,
    memoryMiB: extra.append?.includes('appliance.test.plugins') ? 320 : 256, ...extra, fwcfg,
    append: [
      ...(addressing === 'static' ? [slirpStaticIp(extra.slirpNet)] : []), ...(extra.append ?? []),
    ],
    hostfwd: [{ hostPort: port, guestPort: 50000 }, ...(extra.hostfwd ?? [])],
  });
  const endpoint = `127.0.0.1:${port}`;
  const cosictl = join(a.dir, 'cosictl');
  const tls = (role: Role = 'admin'): ChannelTls => ({
    ca: secrets.ca.certificate, cert: secrets.clients[role].certificate, key: secrets.clients[role].key,
  });
  const cosictlConfig = join(dir, 'cosictl.yaml');
  writeFileSync(cosictlConfig, JSON.stringify({
    context: 'vm', contexts: { vm: { endpoint, ca: tls().ca, cert: tls().cert, key: tls().key } },
  }), { mode: 0o600 });
  const cli = (flags: string[]) => (args: string[], input?: string, timeoutMs = 60_000) =>
    runProgram(cosictl, [...flags, ...args], { ...(input !== undefined ? { input } : {}), timeoutMs });
  const run = cli(['--config', cosictlConfig]);
  const runInsecure = cli(['--insecure', '-e', endpoint]);
  const pollWith = (exec: typeof run) => async (args: string[], re: RegExp, ms = 30_000) => {
    const deadline = Date.now() + ms;
    let r = await exec(args);
    while (!re.test(r.out) && Date.now() < deadline) {
      await new Promise((x) => setTimeout(x, 250));
      r = await exec(args);
    }
    return r;
  };
  o.onLaunch?.(vm, run);
  await vm.waitFor(READY_RE, 180_000);
  const awaitPlugins = async (names: readonly string[], ms = 180_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await run(['get', 'plugins', '-o', 'json']);
      const states = new Map(r.code === 0 ? (JSON.parse(r.out) as PluginList).items
        .map((p) => [p.metadata.id, p.spec.state] as const) : []);
      const waiting = names.filter((n) => states.get(n) !== 'running');
      if (!waiting.length) return;
      if (Date.now() > deadline) {
        throw new Error(`plugins not running after ${ms / 1000} s: ${waiting.map((n) => `${n} ${states.get(n)
          ?? 'unknown'}`).join(', ')}${r.code === 0 ? '' : ` (get plugins: exit ${r.code} ${r.err.trim()})`}`);
      }
      await new Promise((x) => setTimeout(x, 500));
    }
  };
  const machine: ApiVm = {
    vm, endpoint, cosictl, cosictlConfig, tls, run, runInsecure,
    poll: pollWith(run), pollInsecure: pollWith(runInsecure), awaitPlugins,
  };
  if (o.awaitApi === false) return machine;
  // The address comes from the network plugin shortly after ready. A machine given its CA another way may
  // still be in maintenance mode (where anyone may read its version), or already past it.
  const either = async (args: string[]) => {
    const r = await run(args);
    return r.code === 0 || o.secrets !== 'none' ? r : runInsecure(args);
  };
  await pollWith(either)(['get', 'versions'], /\sVersion\s/, 60_000);
  return machine;
}
