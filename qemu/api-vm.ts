// api-vm: boots the image with the COSI API forwarded to a free host port and
// drives it with the built cosictl: what the whole-system tests share.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { READY_RE } from '../init/boot/ready-line.ts';
import { artifacts } from './artifacts.ts';
import { launch, type Vm, type VmOptions } from './launch.ts';

export interface CliResult { code: number; out: string; err: string }

export interface ApiVm {
  vm: Vm;
  endpoint: string;
  cosictl: string;
  run(args: string[], input?: string): Promise<CliResult>;
  /** Runs `args` until the output matches `re` (or `ms` pass); returns the last result. */
  poll(args: string[], re: RegExp, ms?: number): Promise<CliResult>;
}

const freePort = () => new Promise<number>((r) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => r(p)); });
});

/**
 * Boots and waits until the API answers through the forwarded port. The guest's
 * address comes from `ip=` on the command line (static, default) or from QEMU's DHCP
 * server (dhcp); either way it is the network plugin that configures it.
 */
export async function bootWithApi(
  extra: Partial<VmOptions> = {}, addressing: 'static' | 'dhcp' = 'static',
): Promise<ApiVm> {
  const a = artifacts();
  const port = await freePort();
  const vm = launch({
    kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline, memoryMiB: 256, ...extra,
    append: [
      ...(addressing === 'static' ? ['ip=10.0.2.15::10.0.2.2:255.255.255.0::eth0:off'] : []), ...(extra.append ?? []),
    ],
    hostfwd: [{ hostPort: port, guestPort: 50000 }, ...(extra.hostfwd ?? [])],
  });
  const endpoint = `127.0.0.1:${port}`;
  const cosictl = join(a.dir, 'cosictl');
  const run = (args: string[], input?: string) => new Promise<CliResult>((resolve) => {
    const c = execFile(
      cosictl, ['-e', endpoint, ...args], { timeout: 60_000 },
      (e, out, err) => resolve({ code: e ? (e as { code?: number }).code ?? 1 : 0, out, err }),
    );
    if (input !== undefined) c.stdin!.end(input);
  });
  const poll = async (args: string[], re: RegExp, ms = 30_000) => {
    const deadline = Date.now() + ms;
    let r = await run(args);
    while (!re.test(r.out) && Date.now() < deadline) {
      await new Promise((x) => setTimeout(x, 250)); r = await run(args);
    }
    return r;
  };
  await vm.waitFor(READY_RE, 180_000);
  // The address comes from the network plugin shortly after ready.
  await poll(['get', 'versions'], /appliance/, 60_000);
  return { vm, endpoint, cosictl, run, poll };
}
