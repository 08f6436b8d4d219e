// reboot, shutdown: declare a PowerRequest. The machine first waits for the holders of its
// ShutdownRequest (up to --grace, or not at all with --force), then stops its services, syncs,
// unmounts and reboots or powers off. reboot --wait follows it until the machine is back.
import { newResource } from '../../cosi/resource/resource.ts';
import { socketErrno } from '../../cosi/remote/status.ts';
import { isNotFound } from '../../cosi/state/errors.ts';
import { type BootStatusSpec, type PowerAction, type PowerRequestSpec } from '../../machinery/model/runtime-types.ts';
import { flag, has, type Parsed, noArguments } from '../args.ts';
import type { Command, CommandIo } from '../command.ts';
import { parseDuration } from '../duration.ts';
import { CliError, EXIT } from '../errors.ts';
import { requestId } from '../follow-status.ts';
import { Session } from '../session.ts';
import {
  BOOT_STATUS_TYPE, CONFIG_NS, MACHINE_STATUS_TYPE, POWER_REQUEST_TYPE, RUNTIME_NS,
} from '../../proto/gen/resource-types.ts';
import { MACHINE_STATUS_ID } from '../../machinery/model/singleton-ids.ts';

const HOLD_HELP = `The machine says it is stopping (get machinestatus: stage, reason, who holds it), then waits
until every finalizer on its ShutdownRequest "shutdown" is gone: a client that must finish first
(a database flushing, a quorum to keep) puts one there ahead of time and removes it when done.
After the grace period it goes on without them; then processes get SIGTERM, and SIGKILL 5 s later.`;

const FLAGS_HELP = `      --grace DURATION   how long holders may delay it (default: the machine's, 30s unless
                         the kernel parameter appliance.shutdown_grace_s says otherwise)
      --force            do not wait for holders
      --id ID            the PowerRequest's id (default: the action and the time)`;

export const REBOOT_HELP = `usage: cosictl reboot [--grace DURATION] [--force] [--wait DURATION]

Reboots the machine gracefully. ${HOLD_HELP}

flags:
${FLAGS_HELP}
      --wait DURATION    wait until the machine is back and ready (e.g. 5m)

While it waits, each change it sees (down, back and booting) is said on stderr. A machine that refuses
connections for 20 s after it went down is gone (powered off; a VM that ends at a reboot): exit 5.

exit codes: 0 asked (with --wait: back and ready), 1 refused or not back in time, 5 unreachable or gone.
`;

export const SHUTDOWN_HELP = `usage: cosictl shutdown [--grace DURATION] [--force]

Powers the machine off gracefully. ${HOLD_HELP}

flags:
${FLAGS_HELP}

exit codes: 0 asked, 1 refused, 5 unreachable.
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The MachineStatus's creation time: a new one is a new boot. */
async function bootMark(s: Session): Promise<number | undefined> {
  try {
    return (await s.state.get({ namespace: RUNTIME_NS, type: MACHINE_STATUS_TYPE, id: MACHINE_STATUS_ID }))
      .metadata.created;
  } catch (e) {
    if (isNotFound(e)) return undefined; // an engine before MachineStatus: the wait looks at BootStatus only
    throw e;
  }
}

/**
 * A machine whose address refuses connections this long after it went down is gone, not rebooting: a
 * booting kernel does not answer at all, and ours listens within seconds of starting; refusals go on only
 * where nothing runs at the address any more (powered off; a VM whose QEMU exits at a reboot, -no-reboot).
 */
const GONE_AFTER_MS = 20_000;

/**
 * Polls with fresh connections until the machine answers from a new boot and says it is ready, saying on
 * stderr each change of what it sees; ends early when the machine is gone.
 */
async function waitForReboot(io: CommandIo, s: Session, before: number | undefined, seconds: number): Promise<void> {
  const start = Date.now();
  const end = start + seconds * 1000;
  let last = 'the machine is going down';
  let refusedSince: number | undefined;
  const say = (now: string) => {
    if (now !== last) io.err(`reboot: ${now} (${Math.round((Date.now() - start) / 1000)} s)\n`);
    last = now;
  };
  // Until the old boot is gone, its answers say nothing about the new one.
  while (Date.now() < end) {
    const probe = new Session(s.ctx, undefined, 3000);
    try {
      await probe.connect(3000);
      refusedSince = undefined;
      const mark = await bootMark(probe);
      if (mark !== undefined && mark === before) {
        say('the machine has not gone down yet');
      } else {
        const b = (await probe.state.get({ namespace: RUNTIME_NS, type: BOOT_STATUS_TYPE, id: 'boot' }))
          .spec as BootStatusSpec;
        if (b.ready && b.phase === 'running') return;
        say(`back, ${b.phase}`);
      }
    } catch (e) {
      const refused = socketErrno(e) === 'ECONNREFUSED';
      refusedSince = refused ? refusedSince ?? Date.now() : undefined;
      say(refused ? 'down: nothing listens at its address' : 'down: not answering');
      if (refusedSince !== undefined && Date.now() - refusedSince >= GONE_AFTER_MS) {
        throw new CliError(`the machine is gone: ${s.ctx.endpoint} has refused connections for `
          + `${GONE_AFTER_MS / 1000} s since it went down (powered off? a VM run with -no-reboot ends at a reboot)`,
        EXIT.unreachable);
      }
    } finally {
      probe.close();
    }
    await sleep(1000);
  }
  throw new CliError(`the machine was not back and ready within ${seconds} s: ${last}`, EXIT.failed);
}

function powerCommand(action: Extract<PowerAction, 'reboot' | 'poweroff'>, name: string, help: string): Command {
  const waits = action === 'reboot';
  return {
    name,
    summary: waits ? 'reboot [--wait 5m]     reboot gracefully (holders of the ShutdownRequest first)'
      : 'shutdown               power off gracefully (holders of the ShutdownRequest first)',
    help,
    flags: ['grace', 'force', 'id', ...(waits ? ['wait'] : [])],
    async run(io) {
      const p: Parsed = io.p;
      noArguments(`${name}`, p.positional);
      const grace = flag(p, 'grace');
      const graceSeconds = grace === undefined ? undefined : parseDuration('grace', grace);
      if (graceSeconds !== undefined && has(p, 'force')) {
        throw new CliError(`${name}: --grace and --force contradict each other: give one`, EXIT.usage);
      }
      const wait = flag(p, 'wait');
      const waitSeconds = wait === undefined ? undefined : parseDuration('wait', wait);
      const s = await io.session();
      const before = waitSeconds === undefined ? undefined : await bootMark(s);
      const id = requestId(name, p);
      const spec: PowerRequestSpec = { action, graceSeconds: graceSeconds ?? 0, force: has(p, 'force') };
      await s.state.create(newResource({ namespace: CONFIG_NS, type: POWER_REQUEST_TYPE, id }, spec));
      io.err(`${name}: asked (PowerRequest "${id}")${has(p, 'force') ? ', not waiting for holders'
        : '; cosictl get machinestatus shows who holds it'}\n`);
      if (waitSeconds === undefined) return EXIT.ok;
      await waitForReboot(io, s, before, waitSeconds);
      io.out('the machine is back and ready\n');
      return EXIT.ok;
    },
  };
}

export const rebootCommand = powerCommand('reboot', 'reboot', REBOOT_HELP);
export const shutdownCommand = powerCommand('poweroff', 'shutdown', SHUTDOWN_HELP);
