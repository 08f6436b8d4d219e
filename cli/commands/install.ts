// install: declares an InstallRequest and follows its InstallStatus until the machine says done
// or failed, printing each phase and the progress of the long ones.
import { parseSizeCondition } from '../../machinery/model/size-condition.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import type { InstallRequestSpec, InstallStatusSpec } from '../../proto/gen/spec-types.ts';
import { flag, has, type Parsed, noArguments } from '../args.ts';
import { CliError, EXIT } from '../errors.ts';
import { followStatus, requestId } from '../follow-status.ts';
import type { Session } from '../session.ts';
import { CONFIG_NS, INSTALL_REQUEST_TYPE, INSTALL_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

export const INSTALL_HELP = `usage: cosictl install [--disk PATH] [--serial S] [--model M] [--size COND] [--wipe]
                       [--reboot] [--source URL] [--id ID] [--no-wait]

Installs the machine's build to one of its disks. The machine (booted from the ISO, or over
the network) writes the disk image its medium carries, reads it back to check it, puts its
machine config on the new disk's STATE, and with --reboot boots it. Progress is printed until
the machine says done or failed. Needs the admin role.

which disk (every flag given must match, and exactly one disk):
      --disk PATH        its device, e.g. /dev/vda or /dev/nvme0n1
      --serial S         its serial number (* matches any run of characters)
      --model M          its model, as the kernel reports it (* as in --serial)
      --size COND        its size: ">= 10GiB", "< 2TB", "8GiB" (exactly)

flags:
      --wipe             overwrite a disk that holds partitions, filesystems or another machine's
                         STATE (refused otherwise, and nothing is written). A disk with a mounted
                         filesystem is always refused.
      --reboot           reboot into the new disk when done (the firmware must boot the disk, not
                         the medium: take the ISO out, or put the disk first in the boot order)
      --source URL       the install/ folder's http(s) URL (a machine booted over the network);
                         default: the medium the machine booted from
      --id ID            the request's id (default install-<time>-<4 hex digits>)
      --no-wait          declare the request and return; follow it with
                         \`cosictl get installstatus ID -w\`

exit codes: 0 installed, 1 refused or failed (the reason is printed), as for every command otherwise.
`;

/** The flags only install takes. */
export const INSTALL_FLAGS = ['disk', 'serial', 'model', 'size', 'wipe', 'reboot', 'source', 'id', 'no-wait'];

const MB = 1e6;

/** One line per phase, and for the long phases one per tenth of the way. */
export function progressLine(s: InstallStatusSpec, last: { phase?: string; tenth: number }): string | undefined {
  const tenth = s.bytesTotal ? Math.floor((10 * s.bytesDone) / s.bytesTotal) : 0;
  const long = s.phase === 'writing' || s.phase === 'verifying';
  if (s.phase === last.phase && !(long && tenth > last.tenth)) return undefined;
  last.phase = s.phase;
  last.tenth = tenth;
  switch (s.phase) {
    case 'checking':
      return `checking: ${s.disk || 'choosing the disk'}${s.source ? ` (payload from ${s.source})` : ''}`;
    case 'writing': case 'verifying':
      return `${s.phase} ${s.disk}: ${(s.bytesDone / MB).toFixed(1)} of ${(s.bytesTotal / MB).toFixed(1)} MB `
        + `(${tenth * 10}%)`;
    case 'configuring': return `configuring: the machine config to ${s.disk}'s STATE`;
    default: return undefined;
  }
}

export async function install(s: Session, p: Parsed, out: (t: string) => void, err: (t: string) => void):
Promise<number> {
  noArguments('install', p.positional);
  const given = (k: string, f: string) => (flag(p, f) !== undefined ? { [k]: flag(p, f) } : {});
  const disk = { ...given('path', 'disk'), ...given('serial', 'serial'), ...given('model', 'model'),
    ...given('size', 'size') };
  if (!Object.keys(disk).length) {
    throw new CliError('install: name the disk with --disk, --serial, --model or --size', EXIT.usage);
  }
  const size = flag(p, 'size');
  const parsed = size === undefined ? undefined : parseSizeCondition(size);
  if (parsed instanceof Error) throw new CliError(`--size: ${parsed.message}`, EXIT.usage);
  const spec: InstallRequestSpec = {
    disk, wipe: has(p, 'wipe'), reboot: has(p, 'reboot'), ...given('source', 'source'),
  };
  const id = requestId('install', p);
  const last = { tenth: 0 } as { phase?: string; tenth: number };
  const follow = has(p, 'no-wait') ? undefined : await followStatus<InstallStatusSpec>(
    s, { namespace: RUNTIME_NS, type: INSTALL_STATUS_TYPE, id }, `install "${id}"`, (st) => {
      const line = progressLine(st, last);
      if (line) err(`${line}\n`);
      return st.phase === 'done' || st.phase === 'failed';
    },
  );
  try {
    await s.state.create(newResource({ namespace: CONFIG_NS, type: INSTALL_REQUEST_TYPE, id }, spec));
    if (!follow) {
      out(`installrequest/${id} created\n`);
      return EXIT.ok;
    }
    const st = await follow.ended;
    if (st.phase === 'failed') throw new CliError(`install "${id}": ${st.error}`, EXIT.failed);
    out(`installed ${st.version} on ${st.disk}: ${st.config}${spec.reboot ? '; the machine reboots into it' : ''}\n`);
    return EXIT.ok;
  } finally { follow?.close(); }
}
