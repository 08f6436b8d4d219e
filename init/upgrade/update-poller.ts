// update-poller: the engine's controller of UpdatePolicy (config, admins): while one exists (the first by id) the
// machine polls its TUF repository (update-client.ts) every poll interval, moved by up to 10% at random, decides
// what to do with what its channel offers (update-decision.ts) and, when its wave and window say so, downloads the
// release (length and hashes checked by TUF) and hands it to the upgrader, whose checks (the bundle's own
// signature, its version) and A/B path with a health-gated trial follow. UpdateStatus (same id) says what it saw
// and why it waits. Kept on /var between boots: the metadata TUF trusts, this machine's seed, and the versions
// whose try failed here, which it never takes again by itself.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import type { TimeStatusSpec, UpdatePolicySpec, UpdateStatusSpec, UpgradeStatusSpec } from
  '../../proto/gen/spec-types.ts';
import type { Controller, ControllerContext } from '../../cosi/controller/contract.ts';
import type { Logger } from '../../machinery/log.ts';
import { clockProblem } from '../../machinery/sys/clock-floor.ts';
import { SEED_RANGE } from '../../machinery/update/waves.ts';
import {
  CONFIG_NS, RUNTIME_NS, TIME_NS, TIME_STATUS_TYPE, UPDATE_POLICY_TYPE, UPDATE_STATUS_TYPE, UPGRADE_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';
import { DEFAULT_HEALTH_TIMEOUT_SECONDS, type Upgrader } from './upgrader.ts';
import { decideUpdate } from './update-decision.ts';
import { UpdateClient, type RepositoryView } from './update-client.ts';
import { tufFault, tufReason } from './tuf-reason.ts';

export const DEFAULT_POLL_SECONDS = 3600;
export const DEFAULT_CHANNEL = 'stable';
/** The id of an upgrade the poller starts: its UpgradeStatus has it too. */
export const updateUpgradeId = (version: string) => `update-${version.replace(/[^A-Za-z0-9.-]/g, '-')}`;

export interface UpdatePollerOptions {
  owner: string;
  log: Logger;
  /** Where it keeps what lasts between boots (on /var), or why this engine polls nothing. */
  dir: string | { refuse: string };
  upgrader: Pick<Upgrader, 'upgradeFrom' | 'runningVersion'>;
  /** Tests: the clock and the jitter. */
  now?: () => Date;
  jitter?: () => number;
}

/** What lasts between boots: the seed and the versions that failed here. */
class Kept {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  seed(): number {
    const f = join(this.dir, 'seed');
    const known = existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) : NaN;
    if (Number.isInteger(known) && known >= 0 && known < SEED_RANGE) return known;
    const seed = randomInt(SEED_RANGE);
    writeFileSync(f, `${seed}\n`);
    return seed;
  }

  failed(): string[] {
    const f = join(this.dir, 'failed-versions.json');
    if (!existsSync(f)) return [];
    const v: unknown = JSON.parse(readFileSync(f, 'utf8'));
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  addFailed(version: string): boolean {
    const list = this.failed();
    if (list.includes(version)) return false;
    writeFileSync(join(this.dir, 'failed-versions.json'), `${JSON.stringify([...list, version])}\n`);
    return true;
  }
}

const blankStatus = (running: string, channel: string): UpdateStatusSpec => ({
  state: 'checking', reason: '', runningVersion: running, channel, offeredVersion: '', seed: 0, wave: 0, error: '',
  failedVersions: [], rootVersion: 0, targetsVersion: 0, snapshotVersion: 0, timestampVersion: 0, metadataBytes: 0,
  bundleBytes: 0, upgradeId: '', url: '',
});

export function updatePoller(o: UpdatePollerOptions): Controller {
  const now = o.now ?? (() => new Date());
  const jitter = o.jitter ?? (() => Math.random() * 2 - 1);
  return {
    name: 'update-poller', owner: o.owner,
    inputs: () => [
      { namespace: CONFIG_NS, type: UPDATE_POLICY_TYPE, kind: 'weak' },
      { namespace: TIME_NS, type: TIME_STATUS_TYPE, kind: 'weak' },
      { namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => [{ type: UPDATE_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      let policyKey = '';
      let client: UpdateClient | undefined;
      let status: UpdateStatusSpec | undefined;
      let id = '';
      // A poll is due: the policy changed or the timer went off (time and upgrade statuses wake it too, for nothing).
      let due = true;
      let timer: NodeJS.Timeout | undefined;
      let busy = false;
      let bundleBytes = 0;
      let retryIn = 0;
      // Made with the first policy: a machine that pulls nothing keeps nothing.
      let kept: Kept | undefined;
      const write = async (s: UpdateStatusSpec) => {
        status = s;
        await ctx.state.put({ namespace: RUNTIME_NS, type: UPDATE_STATUS_TYPE, id }, s);
      };
      /** The next poll in about `seconds` (+-10% unless told exact: a wave or a window opening is a set time). */
      const schedule = (seconds: number, spread = true) => {
        clearTimeout(timer);
        if (ctx.signal.aborted) return undefined;
        const ms = Math.max(1000, seconds * 1000 * (spread ? 1 + 0.1 * jitter() : 1));
        timer = setTimeout(() => {
          due = true;
          ctx.requestReconcile();
        }, ms);
        return new Date(now().getTime() + ms).toISOString();
      };
      try {
        while (await ctx.next()) {
          const policies = await ctx.state.list({ namespace: CONFIG_NS, type: UPDATE_POLICY_TYPE });
          const policy = policies[0];
          await ctx.state.cleanup({ namespace: RUNTIME_NS, type: UPDATE_STATUS_TYPE },
            new Set(policy ? [policy.metadata.id] : []));
          if (!policy) {
            clearTimeout(timer);
            policyKey = '';
            client = undefined;
            continue;
          }
          const spec = policy.spec as UpdatePolicySpec;
          const channel = spec.channel || DEFAULT_CHANNEL;
          id = policy.metadata.id;
          const base = () => ({ ...blankStatus(o.upgrader.runningVersion(), channel), ...status,
            runningVersion: o.upgrader.runningVersion(), channel });
          if (typeof o.dir === 'string') kept ??= new Kept(o.dir);
          if (!kept) {
            await write({ ...base(), state: 'error', error: (o.dir as { refuse: string }).refuse });
            continue;
          }
          await noteFailedTries(ctx, kept, o.log);
          const key = JSON.stringify(spec);
          if (key !== policyKey) {
            policyKey = key;
            status = undefined;
            due = true;
            try {
              client = new UpdateClient({ dir: o.dir as string, urls: spec.urls, channel, root: spec.root });
            } catch (e) {
              client = undefined;
              await write({ ...base(), state: 'error', error: (e as Error).message });
              continue;
            }
          }
          if (!client || busy || !due) continue;
          const time = await ctx.state.find({ namespace: TIME_NS, type: TIME_STATUS_TYPE, id: 'clock' });
          const problem = (time?.spec as TimeStatusSpec | undefined)?.clockProblem ?? clockProblem(now().getTime());
          if (problem) {
            // TimeStatus changes wake this controller: no timer needed.
            await write({ ...base(), state: 'waiting', reason: `the clock is not to be trusted yet: ${problem}` });
            continue;
          }
          due = false;
          const seed = spec.seed ?? kept.seed();
          const interval = spec.pollIntervalSeconds || DEFAULT_POLL_SECONDS;
          await write({ ...base(), state: 'checking', seed });
          let view: RepositoryView;
          try {
            view = await client.check();
          } catch (e) {
            const reason = tufReason(e, problem);
            // A repository out of reach (the network still coming up at boot) is asked again soon, 5 s doubling up
            // to the interval; a refusal waits for the next poll: asking again at once changes nothing.
            retryIn = tufFault(e) === 'unreachable' ? Math.min(interval, retryIn ? retryIn * 2 : 5) : 0;
            if (!retryIn || retryIn >= interval) o.log.warn(`updates: ${reason}`);
            await write({ ...base(), state: 'error', reason: '', error: reason, seed, lastCheck: now().toISOString(),
              nextCheck: schedule(retryIn || interval), ...versionsOf(client) });
            continue;
          }
          retryIn = 0;
          const release = view.offered?.release;
          const failedVersions = kept.failed();
          const decision = decideUpdate({ running: o.upgrader.runningVersion(), channel,
            ...(view.offered ? { offered: { channel: view.offered.channel,
              ...(release ? { release } : {}) } } : {}),
            failedVersions, seed, now: now(), window: spec.window, mode: spec.mode ?? 'auto' });
          const seen: UpdateStatusSpec = { ...base(), seed, url: view.url, error: '', lastCheck: now().toISOString(),
            offeredVersion: release?.version ?? '', failedVersions, metadataBytes: view.metadataBytes,
            bundleBytes, rootVersion: view.versions.root, targetsVersion: view.versions.targets,
            snapshotVersion: view.versions.snapshot, timestampVersion: view.versions.timestamp, upgradeId: '',
            ...(decision.wave ? { wave: decision.wave.wave, waveOpens: decision.wave.opens.toISOString() } : {}) };
          if (!decision.act) {
            // Wake when the wave or the window opens, if that is before the next poll (a short window is not missed).
            const until = decision.wake ? (decision.wake.getTime() - now().getTime()) / 1000 : Infinity;
            const next = until > 0 && until < interval ? schedule(until + 1, false) : schedule(interval);
            await write({ ...seen, state: decision.state, reason: decision.reason, nextCheck: next });
            continue;
          }
          // Handed over already (received, written, waiting for the reboot or its trial): not started again.
          const under = (await ctx.state.find({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE,
            id: updateUpgradeId(decision.release.version) }))?.spec as UpgradeStatusSpec | undefined;
          if (under && under.phase !== 'failed' && under.phase !== 'done') {
            await write({ ...seen, state: 'upgrading', upgradeId: updateUpgradeId(decision.release.version),
              reason: `${decision.release.version} is ${under.phase}; the machine reboots into it`,
              nextCheck: schedule(interval) });
            continue;
          }
          busy = true;
          const run = { client, view, spec, seen, write, log: o.log, upgrader: o.upgrader };
          void upgrade(ctx, run)
            .then((bytes) => {
              bundleBytes += bytes;
            })
            .finally(() => {
              busy = false;
              schedule(interval);
              // The policy changed meanwhile: its first poll now, not an interval later.
              if (due && !ctx.signal.aborted) ctx.requestReconcile();
            });
        }
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function versionsOf(client: UpdateClient) {
  const v = client.trustedVersions();
  return { rootVersion: v.root, targetsVersion: v.targets, snapshotVersion: v.snapshot, timestampVersion: v.timestamp };
}

/** Upgrades whose try failed on this machine (they reached its slot: bytes written), kept so none is taken again. */
async function noteFailedTries(ctx: ControllerContext, kept: Kept, log: Logger): Promise<void> {
  for (const r of await ctx.state.list({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE })) {
    const s = r.spec as UpgradeStatusSpec;
    if (!r.metadata.id.startsWith('update-') || s.phase !== 'failed' || !s.bytesWritten || !s.version) continue;
    if (kept.addFailed(s.version)) log.warn(`updates: ${s.version} failed here (${s.error}): not taken again`);
  }
}

interface UpgradeRun {
  client: UpdateClient;
  view: RepositoryView;
  spec: UpdatePolicySpec;
  seen: UpdateStatusSpec;
  write(s: UpdateStatusSpec): Promise<void>;
  log: Logger;
  upgrader: UpdatePollerOptions['upgrader'];
}

/**
 * Streams the offered release into the upgrader (TUF's length and hashes checked on the way, the bundle's signature
 * and parts by the upgrader as for any upgrade); the bundle's bytes fetched.
 */
async function upgrade(ctx: ControllerContext, r: UpgradeRun): Promise<number> {
  const { release, target } = r.view.offered!;
  const version = release!.version;
  const upgradeId = updateUpgradeId(version);
  const before = r.client.fetched;
  const fetched = () => r.client.fetched - before;
  try {
    await r.write({ ...r.seen, state: 'downloading', reason: `fetching ${version} (${target!.length} bytes) for the `
      + 'slot not running', upgradeId });
    r.log.info(`updates: fetching ${version} from ${r.view.url} (${target!.length} bytes)`);
    await r.upgrader.upgradeFrom(upgradeId, {
      source: `${r.view.url.replace(/\/?$/, '/')}targets/${target!.path}`, reboot: true, tries: 1,
      allowDowngrade: false,
      healthTimeoutSeconds: r.spec.healthTimeoutSeconds || DEFAULT_HEALTH_TIMEOUT_SECONDS,
    }, async () => r.client.stream(target!), { version });
    if (ctx.signal.aborted) return fetched();
    const after = (await ctx.state.find({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id: upgradeId }))
      ?.spec as UpgradeStatusSpec | undefined;
    if (after?.phase === 'failed') {
      // The stream's own refusal (TUF's length or hash) reaches the upgrader as its failure: named in TUF's terms.
      const refusal = new Error(after.error);
      const reason = tufFault(refusal) === 'mismatch' ? tufReason(refusal) : `the upgrade failed: ${after.error}`;
      r.log.warn(`updates: ${version}: ${reason}`);
      await r.write({ ...r.seen, state: 'error', reason: '', error: `${version}: ${reason}`, upgradeId,
        bundleBytes: r.seen.bundleBytes + fetched() });
    } else {
      await r.write({ ...r.seen, state: 'upgrading', reason: `${version} is being written; the machine reboots into it`,
        upgradeId, bundleBytes: r.seen.bundleBytes + fetched() });
    }
  } catch (e) {
    const reason = tufReason(e);
    r.log.warn(`updates: ${version}: ${reason}`);
    await r.write({ ...r.seen, state: 'error', reason: '', error: `${version}: ${reason}`,
      bundleBytes: r.seen.bundleBytes + fetched() });
  }
  return fetched();
}
