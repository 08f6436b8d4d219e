// upgrade, rollback: declare an UpgradeRequest (uploading a local bundle in chunks, resuming where
// the machine says it stands after a failed call) or a RollbackRequest, and follow the UpgradeStatus
// of the same id until the new system is written to its slot, or refused.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { newResource } from '../../cosi/resource/resource.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { UPGRADE_RPC, UPLOAD_CHUNK_MAX, callUnary } from '../../machinery/model/service-wire.ts';
import type { UpgradeRequestSpec, UpgradeStatusSpec, VersionSpec } from '../../proto/gen/spec-types.ts';
import { flag, has, type Parsed, noArguments } from '../args.ts';
import { parseDuration } from '../duration.ts';
import { CliError, EXIT } from '../errors.ts';
import { followStatus, requestId } from '../follow-status.ts';
import type { Session } from '../session.ts';
import {
  CONFIG_NS, ROLLBACK_REQUEST_TYPE, RUNTIME_NS, UPGRADE_REQUEST_TYPE, UPGRADE_STATUS_TYPE, VERSION_TYPE,
} from '../../proto/gen/resource-types.ts';

export const UPGRADE_HELP = `usage: cosictl upgrade --image FILE|URL [--no-reboot] [--tries N]
                       [--health-timeout DURATION] [--id ID] [--no-wait] [--allow-downgrade]

Upgrades the machine to the signed bundle (the image build's upgrade format,
appliance-upgrade.tar). A FILE is uploaded in chunks (an upload cut off resumes where the
machine stands); a URL is fetched by the machine. The machine checks the bundle's signature
against the keys it trusts and its version against its UpgradePolicy before it keeps any of
it, writes it to the boot slot not running, and reboots into it. The new system becomes the
default only when its health checks pass; otherwise it reboots and the boot loader goes back
to the running one. Needs the admin role.

flags:
      --image FILE|URL      the bundle
      --no-reboot           write the slot and stop: the machine tries it at its next boot
      --tries N             boots the new slot gets before the loader falls back (1-3, default 1)
      --health-timeout D    how long the new system has to become healthy (default 5m)
      --id ID               the request's id (default upgrade-<time>-<4 hex digits>)
      --no-wait             declare the request and return (a FILE is still uploaded first)
      --allow-downgrade     take a bundle whose version is below the running one (refused otherwise)

Follow the new system's try with \`cosictl get upgradestatus ID -w\`, and the slots with
\`cosictl get versions\`.

exit codes: 0 written (the machine reboots into it unless --no-reboot), 1 refused or failed
(the reason is printed), as for every command otherwise.
`;

export const ROLLBACK_HELP = `usage: cosictl rollback [--no-reboot] [--id ID]

Makes the boot slot not running the default, when it holds a system that came up healthy,
and reboots into it (with --no-reboot: at the next boot). \`cosictl get versions\` shows the
slots. Needs the admin role.

exit codes: 0 done, 1 refused (the reason is printed), as for every command otherwise.
`;

/** The flags each of these commands takes. */
export const UPGRADE_FLAGS = ['image', 'no-reboot', 'tries', 'health-timeout', 'id', 'no-wait', 'allow-downgrade'];
export const ROLLBACK_FLAGS = ['no-reboot', 'id'];

const MB = 1e6;
/** Follows UpgradeStatus `id` until `until` says it ended; prints each phase. */
async function follow(s: Session, id: string, err: (t: string) => void, until: (st: UpgradeStatusSpec) => boolean) {
  let phase = '';
  let latest: UpgradeStatusSpec | undefined;
  const f = await followStatus<UpgradeStatusSpec>(
    s, { namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id }, `upgrade "${id}"`, (st) => {
      latest = st;
      if (st.phase !== phase) {
        phase = st.phase ?? '';
        if (phase === 'writing') err(`writing ${st.version} to slot ${st.slot}\n`);
      }
      return until(st);
    },
  );
  return { ...f, latest: () => latest };
}

/** Sends the file from where the machine stands; after a failed call, asks again where that is. */
async function uploadFile(
  s: Session, id: string, file: string, size: number, stands: () => number | undefined, err: (t: string) => void,
): Promise<void> {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(UPLOAD_CHUNK_MAX);
  let offset = 0;
  let tenth = -1;
  let failures = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, offset);
      let r;
      try {
        r = await callUnary(s.state, UPGRADE_RPC.upload, {
          upgradeId: id, offset, data: buf.subarray(0, n),
        }, s.longCallMs);
      } catch (e) {
        // The machine's answer to the bundle itself (refused) ends the upload; a lost call is sent again.
        if (e instanceof StateError || ++failures > 5) throw e;
        err(`upload: ${(e as Error).message}; resuming\n`);
        await sleep(1000);
        offset = stands() ?? offset;
        continue;
      }
      failures = 0;
      offset = r.received;
      const t = Math.floor((10 * offset) / size);
      if (t > tenth) {
        tenth = t;
        err(`uploading: ${(offset / MB).toFixed(1)} of ${(size / MB).toFixed(1)} MB\n`);
      }
      if (r.complete) return;
      if (n === 0) {
        throw new CliError(`${file}: the machine wants more than its ${size} bytes (not a whole bundle)`, EXIT.failed);
      }
    }
  } finally { closeSync(fd); }
}

/** How long `upgrade` waits for a machine that went away while it wrote the new slot. */
const COME_BACK_MS = 5 * 60_000;

/**
 * After the connection went while the machine wrote `writing.slot`: asks until the machine answers again, and
 * reads from its slots whether the write finished.
 */
async function cameBack(
  s: Session, id: string, writing: UpgradeStatusSpec, out: (t: string) => void,
): Promise<number> {
  const deadline = Date.now() + COME_BACK_MS;
  let last = '';
  while (Date.now() < deadline) {
    await sleep(2000);
    let slot: VersionSpec;
    try {
      slot = (await s.state.get({ namespace: RUNTIME_NS, type: VERSION_TYPE, id: writing.slot })).spec as VersionSpec;
    } catch (e) {
      last = (e as Error).message;
      continue; // still rebooting
    }
    // The write empties the slot first and names its version last: the version there means the write finished.
    if (slot.version === writing.version) {
      out(`${writing.version} written to slot ${writing.slot} (the machine went before it said so); `
        + (slot.running ? 'the machine rebooted into it' : `the machine runs the other slot now: \`cosictl get `
          + `upgradestatus ${id}\` says how the try went`) + '\n');
      return EXIT.ok;
    }
    throw new CliError(`the machine is back, but slot ${writing.slot} holds ${slot.version || 'no system'}, not `
      + `${writing.version}: the write did not finish${slot.problem ? ` (the slot: ${slot.problem})` : ''}`,
    EXIT.failed);
  }
  throw new CliError(`the machine did not answer within ${COME_BACK_MS / 60_000} min after it went away while `
    + `writing slot ${writing.slot}${last ? ` (${last})` : ''}: \`cosictl get versions\` once it is back`,
  EXIT.unreachable);
}

export async function upgrade(s: Session, p: Parsed, out: (t: string) => void, err: (t: string) => void):
Promise<number> {
  noArguments('upgrade', p.positional);
  const image = flag(p, 'image');
  if (!image) throw new CliError('upgrade: name the bundle with --image FILE or --image URL', EXIT.usage);
  const url = /^https?:\/\//.test(image);
  let size = 0;
  if (!url) {
    try {
      size = statSync(image).size;
    } catch (e) {
      throw new CliError(`cannot read ${image}: ${(e as Error).message}`, EXIT.usage);
    }
  }
  const tries = flag(p, 'tries') === undefined ? 0 : Number(flag(p, 'tries'));
  if (!Number.isInteger(tries) || tries < 0 || tries > 3) {
    throw new CliError(`--tries ${flag(p, 'tries')}: a number from 1 to 3`, EXIT.usage);
  }
  const timeout = flag(p, 'health-timeout');
  const spec: UpgradeRequestSpec = {
    ...(url ? { source: image } : {}), reboot: !has(p, 'no-reboot'), tries,
    allowDowngrade: has(p, 'allow-downgrade'),
    healthTimeoutSeconds: timeout === undefined ? 0 : parseDuration('health-timeout', timeout),
  };
  const id = requestId('upgrade', p);
  const noWait = has(p, 'no-wait');
  const ended = (st: UpgradeStatusSpec) => st.phase === 'failed' || st.phase === 'staged' || st.phase === 'done'
    || (noWait && st.phase !== 'receiving');
  const f = await follow(s, id, err, ended);
  /** The machine went while it wrote the slot: said, then found again and asked whether the write finished. */
  const wentWhileWriting = async (e: unknown) => {
    const writing = f.latest()!;
    err(`cosictl: ${(e as Error).message}; it was writing ${writing.version} to slot ${writing.slot} and reboots `
      + `once that is done: waiting for it to answer again (${COME_BACK_MS / 60_000} min at most)\n`);
    return cameBack(s, id, writing, out);
  };
  try {
    await s.state.create(newResource({ namespace: CONFIG_NS, type: UPGRADE_REQUEST_TYPE, id }, spec));
    if (!url) {
      try {
        await uploadFile(s, id, image, size, () => f.latest()?.bytesReceived, err);
      } catch (e) {
        // Writing, the machine has the whole bundle: a call lost now is the machine going (it reboots once written).
        if (spec.reboot && f.latest()?.phase === 'writing') return await wentWhileWriting(e);
        // The machine's status says why it refused better than the call's error does.
        const st = await Promise.race([f.ended, sleep(2000).then(() => undefined)]);
        if (st?.phase === 'failed') throw new CliError(`upgrade "${id}": ${st.error}`, EXIT.failed);
        // Given up here: the machine stops waiting for the rest.
        await s.state.destroy({ namespace: CONFIG_NS, type: UPGRADE_REQUEST_TYPE, id }).catch((d: Error) => {
          err(`cannot withdraw upgraderequest/${id}: ${d.message}\n`);
        });
        throw e;
      }
    }
    if (noWait && url) {
      out(`upgraderequest/${id} created\n`);
      return EXIT.ok;
    }
    let st: UpgradeStatusSpec;
    try {
      st = await f.ended;
    } catch (e) {
      // Rebooting into the new slot as soon as it is written, the machine may go before its last word reaches us.
      if (!spec.reboot || f.latest()?.phase !== 'writing' || !(e instanceof CliError)) throw e;
      return await wentWhileWriting(e);
    }
    if (st.phase === 'failed') throw new CliError(`upgrade "${id}": ${st.error}`, EXIT.failed);
    out(`${st.version} written to slot ${st.slot} (${(st.bytesWritten / MB).toFixed(1)} MB); `
      + (spec.reboot ? 'the machine reboots into it' : 'the machine tries it at its next boot')
      + `: \`cosictl get upgradestatus ${id} -w\` follows the try\n`);
    return EXIT.ok;
  } finally { f.close(); }
}

export async function rollback(s: Session, p: Parsed, out: (t: string) => void, err: (t: string) => void):
Promise<number> {
  noArguments('rollback', p.positional);
  const id = requestId('rollback', p);
  const reboot = !has(p, 'no-reboot');
  const f = await follow(s, id, err, (st) => st.phase === 'failed' || st.phase === 'done');
  try {
    await s.state.create(newResource({ namespace: CONFIG_NS, type: ROLLBACK_REQUEST_TYPE, id }, { reboot }));
    const st = await f.ended;
    if (st.phase === 'failed') throw new CliError(`rollback "${id}": ${st.error}`, EXIT.failed);
    out(`slot ${st.slot} (${st.version}) is the default; ${reboot ? 'the machine reboots into it'
      : 'the machine boots it next time'}\n`);
    return EXIT.ok;
  } finally { f.close(); }
}
