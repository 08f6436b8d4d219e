// test-confine-probe: (tests) confines this process as a built-in plugin would be, then
// tries mount(2) of a tmpfs (harmless: its mount namespace is its own) and prints what
// happened, with the process's seccomp mode, capabilities and mount namespace; with --run,
// also what PROGRAM printed, run by this confined process (the filter is inherited); and
// whether a thread started after confining runs (pthread_create goes through clone3 first).
//   test-confine-probe PLUGIN [--without-filter] [--run PROGRAM]
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { loadPlugin } from '../../plugins/load.ts';
import { confine } from '../../plugins/sdk/confine.ts';

export async function testConfineProbe(args: string[]): Promise<number> {
  const p = await loadPlugin(args[0] ?? '');
  if (!p) {
    process.stderr.write(`test-confine-probe: name a built-in plugin\n`);
    return 2;
  }
  if (p.hostMounts) {
    process.stderr.write(`test-confine-probe: ${p.name} mounts for the machine: not probed\n`);
    return 2;
  }
  confine(p, { withoutFilter: args.includes('--without-filter') });
  const target = mkdtempSync(join(tmpdir(), 'probe-'));
  let mount = 'ok';
  try {
    native().mount('probe', target, 'tmpfs', 0);
    native().umount2(target);
  } catch (e) {
    mount = (e as { code?: string }).code ?? (e as Error).message;
  }
  rmdirSync(target);
  const thread = await new Promise<string>((resolve) => {
    const w = new Worker('require(\'node:worker_threads\').parentPort.postMessage(\'ok\')', { eval: true });
    w.once('message', (m) => {
      void w.terminate();
      resolve(String(m));
    });
    w.once('error', (e) => resolve(e.message));
  });
  const program = args[args.indexOf('--run') + 1];
  const ran = args.includes('--run') && program ? spawnSync(program, { encoding: 'utf8' }) : undefined;
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (k: string) => new RegExp(`^${k}:\\s+(\\S+)`, 'm').exec(status)?.[1] ?? '';
  process.stdout.write(JSON.stringify({
    mount, thread, seccomp: field('Seccomp'), capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs'),
    mountNamespace: readlinkSync('/proc/self/ns/mnt'),
    ...(ran ? { ran: ran.error ? `${(ran.error as NodeJS.ErrnoException).code}` : ran.stdout } : {}),
  }) + '\n');
  return 0;
}
