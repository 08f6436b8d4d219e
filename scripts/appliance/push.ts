// push: `appliance push [NAME...]`: the edit-to-running loop. Builds the named extensions of the definition (each
// only when its inputs changed, as `appliance build` does, into the same cache), asks the machine what each runs,
// and for each whose image differs uploads it over ExtensionService/Push in chunks (a call that fails is sent again
// from where the machine says it stands), signed with the appliance's signing key, then follows its ExtensionStatus
// until the pushed image runs (or fails), printing the times. The machine swaps it in without a reboot as a
// development override (dropped at its next boot unless --persist).
import { closeSync, openSync, readSync } from 'node:fs';
import { sign } from 'node:crypto';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildExtension, type BuiltExtension } from '../../image/appliance/extension-build.ts';
import type { ApplianceDefinition } from '../../image/appliance/definition.ts';
import type { SigningKey } from '../../image/formats/format.ts';
import { BUILD_CACHE_DIR } from '../../image/appliance/build-appliance.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { findResource } from '../../cosi/state/find.ts';
import { callUnary, EXTENSION_RPC, UPLOAD_CHUNK_MAX } from '../../machinery/model/service-wire.ts';
import { pushSigningText } from '../../machinery/model/push-signature.ts';
import type { ExtensionStatusSpec } from '../../machinery/model/runtime-types.ts';
import { RUNTIME_NS, EXTENSION_STATUS_TYPE } from '../../proto/gen/resource-types.ts';
import { Session } from '../../cli/session.ts';
import type { Context } from '../../cli/config.ts';
import { followStatus } from '../../cli/follow-status.ts';

export interface PushOptions {
  definition: ApplianceDefinition;
  /** The extensions to push (each only when its image is not the one the machine runs); none: every one. */
  names: string[];
  context: Context;
  persist: boolean;
  signingKey: () => SigningKey;
  progress(message: string): void;
  /** How long a pushed image may take to run (default 5 minutes). */
  runningTimeoutMs?: number;
}

export interface PushedExtension {
  name: string; sha256: string; bytes: number;
  /** Seconds: the upload; from the push's start until the new process runs. */
  uploadSeconds: number; runningSeconds: number;
  status: ExtensionStatusSpec;
}

/** What the machine refused or what failed there: the extension and why. */
export class PushRefused extends Error {}

const MB = 1e6;

/** Pushes what `o` asks for; the extensions pushed (none when the machine runs every one already). */
export async function pushExtensions(o: PushOptions): Promise<PushedExtension[]> {
  const d = o.definition;
  const unknown = o.names.filter((n) => !d.extensions.some((e) => e.name === n));
  if (unknown.length) {
    throw new PushRefused(`${unknown.join(', ')}: not an extension of ${d.file} (it has ${
      d.extensions.map((e) => e.name).join(', ') || 'none'})`);
  }
  const chosen = o.names.length ? d.extensions.filter((e) => o.names.includes(e.name)) : d.extensions;
  const outDir = join(dirname(d.file), 'out', BUILD_CACHE_DIR, 'extensions');
  const built: BuiltExtension[] = [];
  for (const e of chosen) {
    built.push(await buildExtension(e, { outDir, version: d.version, progress: o.progress,
      ...(d.registryCA ? { registryCA: d.registryCA } : {}) }));
  }
  const s = new Session(o.context);
  await s.connect();
  try {
    const pushed: PushedExtension[] = [];
    for (const b of built) {
      const running = await findResource(s.state, { namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE, id: b.name });
      const status = running?.spec as ExtensionStatusSpec | undefined;
      if (status?.sha256 === b.sha256 && status.phase === 'running') {
        o.progress(`${b.name}: the machine runs ${b.sha256.slice(0, 12)} already`);
        continue;
      }
      pushed.push(await pushOne(s, b, o));
    }
    return pushed;
  } finally {
    s.close();
  }
}

async function pushOne(s: Session, b: BuiltExtension, o: PushOptions): Promise<PushedExtension> {
  const started = performance.now();
  const signature = sign(null, Buffer.from(pushSigningText(b.name, b.sha256)), o.signingKey().privateKey);
  // Followed from before the upload: a swap quicker than the last chunk's answer is still seen.
  const f = await followStatus<ExtensionStatusSpec>(s, { namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE,
    id: b.name }, `the push of ${b.name}`, (st) => st.sha256 === b.sha256
    && (st.phase === 'running' || st.phase === 'failed' || st.phase === 'crashing'));
  try {
    o.progress(`${b.name}: pushing ${b.sha256.slice(0, 12)} (${(b.bytes / MB).toFixed(1)} MB)`);
    await upload(s, b, o.persist, signature);
    const uploadSeconds = (performance.now() - started) / 1000;
    o.progress(`${b.name}: uploaded in ${uploadSeconds.toFixed(1)} s; the machine swaps it in`);
    const timeout = sleep(o.runningTimeoutMs ?? 300_000).then(() => undefined);
    const st = await Promise.race([f.ended, timeout]);
    if (!st) throw new PushRefused(`${b.name}: not running ${o.runningTimeoutMs ?? 300_000} ms after its push`);
    if (st.phase !== 'running') {
      throw new PushRefused(`${b.name}: ${st.phase}: ${st.error} (\`cosictl delete extensionoverride ${b.name}\` `
        + 'runs the declared image again)');
    }
    return { name: b.name, sha256: b.sha256, bytes: b.bytes, uploadSeconds,
      runningSeconds: (performance.now() - started) / 1000, status: st };
  } finally {
    f.close();
  }
}

/** Calls in flight at once: the machine takes each in order, so the network and the machine overlap. */
const IN_FLIGHT = 4;

/**
 * Sends the image in chunks, IN_FLIGHT at a time; after a call fails on the way, the others are let end and the
 * image is sent on from where the machine says it stands. The machine's answer to the image itself ends the push.
 */
async function upload(s: Session, b: BuiltExtension, persist: boolean, signature: Buffer): Promise<void> {
  const fd = openSync(b.path, 'r');
  try {
    let next = 0;
    let failures = 0;
    /** The machine took a chunk: the push is open, and more may be in flight. */
    let opened = false;
    for (;;) {
      let complete = false;
      /** The first failure of this round, the lowest offset that failed, and where the machine said it stands. */
      let failed: Error | undefined;
      let lowest = Infinity;
      let stands: number | undefined;
      const inFlight = new Set<Promise<void>>();
      const send = (offset: number, data: Buffer) => {
        const call = callUnary(s.state, EXTENSION_RPC.push, {
          extension: b.name, sha256: b.sha256, size: b.bytes, offset, data, persist, signature,
        }, s.longCallMs).then((r) => {
          opened = true;
          if (r.complete) complete = true;
        }, (e: Error) => {
          failed ??= e;
          lowest = Math.min(lowest, offset);
          const at = /the machine holds (\d+) bytes|the machine holds (no) push/.exec(e.message);
          if (at) stands = Math.min(stands ?? Infinity, at[2] ? 0 : Number(at[1]));
        }).finally(() => inFlight.delete(call));
        inFlight.add(call);
      };
      while (!failed && !complete && (next < b.bytes || inFlight.size)) {
        // The first chunk alone: it opens the push (or is refused) before the others come.
        while (inFlight.size < (opened ? IN_FLIGHT : 1) && next < b.bytes && !failed) {
          const data = Buffer.alloc(Math.min(UPLOAD_CHUNK_MAX, b.bytes - next));
          readSync(fd, data, 0, data.length, next);
          send(next, data);
          next += data.length;
        }
        await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      if (complete) return;
      if (!failed) throw new Error(`${b.name}: every byte sent, and the machine did not say the image was whole`);
      if (stands !== undefined && failures++ < 3) {
        next = stands;
        continue;
      }
      if (failed instanceof StateError) throw new PushRefused(`${b.name}: ${failed.message}`, { cause: failed });
      if (failures++ >= 3) throw failed;
      await sleep(1000);
      next = Number.isFinite(lowest) ? lowest : 0;
    }
  } finally {
    closeSync(fd);
  }
}
