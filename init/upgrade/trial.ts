// trial: what the system booted after an upgrade does with the upgrade's record (boot-partition.ts).
//   The tried slot is running: it waits for HealthStatus to be healthy and then marks itself good (the
//     default from now on); if that has not happened within the request's health timeout, it notes which
//     checks failed and reboots, and the loader counts the try (after the last one it falls back). A critical
//     extension restarted CRITICAL_RESTARTS times fails the try at once: its health would never hold.
//   The other slot is running and the tried one is no longer being tried: the loader fell back (or the
//     tried system never reported back); the upgrade failed, and the record says which version and why.
// Either way the upgrade's UpgradeStatus is published again from the record.
import type { HealthStatusSpec } from '../../proto/gen/spec-types.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import type { State } from '../../cosi/state/state.ts';
import { upsert } from '../../cosi/state/upsert.ts';
import { forgetTried, markGood } from '../../machinery/disk/boot-slots.ts';
import type { Logger } from '../../machinery/log.ts';
import type { BootPartition, UpgradeRecord } from './boot-partition.ts';
import {
  EXTENSION_STATUS_TYPE, HEALTH_STATUS_TYPE, RUNTIME_NS, UPGRADE_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';
import { CRITICAL_RESTARTS, crashLooping } from '../../machinery/model/extension-manifest.ts';
import type { ExtensionStatusSpec } from '../../machinery/model/runtime-types.ts';
import { HEALTH_ID } from '../../machinery/model/singleton-ids.ts';

export interface TrialOptions {
  state: State;
  log: Logger;
  owner: string;
  boot: BootPartition;
  reboot: (why: string) => void;
  slotsChanged: () => Promise<void>;
  /** How long health must hold before the slot is marked good (default HEALTHY_FOR_MS). */
  stableMs?: number;
}

/**
 * Health checks a tried system need not pass: the clock waits on servers out of the machine's hands, and a
 * system rolled back for an unreachable time server would be rolled back for nothing it did.
 */
const NOT_TRIED = new Set(['time']);
const healthyForTrial = (h: HealthStatusSpec) =>
  (h.checks ?? []).length > 0 && (h.checks ?? []).every((c) => c.ok || NOT_TRIED.has(c.name));

/** A tried system is marked good once healthy this long without a break. */
export const HEALTHY_FOR_MS = 15_000;

const now = () => new Date().toISOString();

/** A try being followed: its controller for the engine's list, and close() for the engine's stop. */
export interface Trial { controller?: Controller; close(): void }

/**
 * Reads the upgrade's record at the engine's start and publishes its UpgradeStatus; when this boot is the try,
 * the controller that follows the health checks until the slot is marked good or the time is up.
 */
export async function startTrial(o: TrialOptions): Promise<Trial> {
  const idle: Trial = { close() {} };
  const { record: rec, problem } = o.boot.readRecord();
  // An unreadable record is reported with the slots (Version's problem); there is no trial to follow then.
  if (problem) o.log.warn(`upgrade: ${problem}; no trial is followed`);
  if (!rec) return idle;
  const loader = o.boot.loader();
  const slot = rec.status.slot;
  const publish = (r: UpgradeRecord) => upsert(o.state, { namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id: r.id },
    r.status, o.owner);
  const open = rec.status.phase === 'staged' || rec.status.phase === 'trying';

  if (rec.status.phase === 'writing') {
    // The record is written before the slot, the loader told to try it only after: a machine that stopped between
    // never booted the half-written slot, and says so.
    rec.status = {
      ...rec.status, phase: 'failed', finishedAt: now(),
      error: `the machine stopped while slot ${slot} was being written (version ${rec.status.version}; a power cut?): `
        + `the boot loader was never told to try it, and slot ${o.boot.running} booted as before`,
    };
    o.boot.setRecord(rec);
    o.log.warn(`upgrade "${rec.id}": ${rec.status.error}`);
    await publish(rec);
    return idle;
  }

  if (open && o.boot.running !== slot && loader.trySlot !== slot) {
    const why = rec.trialProblem ? `its health checks did not pass: ${rec.trialProblem}`
      : 'it never reported back (its system stopped, or could not start, before its health checks passed)';
    rec.status = {
      ...rec.status, phase: 'failed', finishedAt: now(),
      error: `slot ${slot} (version ${rec.status.version}) did not come up healthy: ${why}; the boot loader went `
        + `back to slot ${o.boot.running}`,
    };
    o.boot.setRecord(rec);
    o.boot.setLoader(forgetTried(loader));
    o.log.warn(`upgrade "${rec.id}": ${rec.status.error}`);
    await publish(rec);
    await o.slotsChanged();
    return idle;
  }
  if (!open || o.boot.running !== slot || loader.trySlot !== slot) {
    await publish(rec);
    return idle;
  }

  rec.status = { ...rec.status, phase: 'trying' };
  o.boot.setRecord(rec);
  await publish(rec);
  o.log.info(`upgrade "${rec.id}": trying ${rec.status.version} in slot ${slot} (${loader.triesLeft} tries left); `
    + `it must be healthy for ${(o.stableMs ?? HEALTHY_FOR_MS) / 1000} s within ${rec.healthTimeoutSeconds} s`);
  let latest: HealthStatusSpec | undefined;
  let settled = false;
  let holding: NodeJS.Timeout | undefined;
  const settle = async (healthy: boolean, why?: string) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    clearTimeout(holding);
    if (healthy) {
      o.boot.setLoader(markGood(o.boot.loader(), slot as 'A' | 'B'));
      rec.status = { ...rec.status, phase: 'done', finishedAt: now() };
      o.boot.setRecord(rec);
      o.log.info(`upgrade "${rec.id}": healthy; slot ${slot} (${rec.status.version}) is marked good and the default`);
      await publish(rec);
      await o.slotsChanged();
      return;
    }
    const failing = (latest?.checks ?? []).filter((c) => !c.ok && !NOT_TRIED.has(c.name))
      .map((c) => `${c.name}: ${c.message}`).join('; ')
      || 'no health status was published';
    rec.trialProblem = why ?? `after ${rec.healthTimeoutSeconds} s: ${failing}`;
    o.boot.setRecord(rec);
    o.log.error(`upgrade "${rec.id}": not healthy${why ? ':' : ''} ${rec.trialProblem}; rebooting (the loader counts `
      + 'the try)');
    o.reboot(`upgrade "${rec.id}": slot ${slot} ${why ? 'failed its try' : 'not healthy in time'}`);
  };
  const timer = setTimeout(() => void settle(false), rec.healthTimeoutSeconds * 1000);
  const health = { namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID };
  const extensions = { namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE };
  const controller: Controller = {
    name: 'upgrade-trial', owner: o.owner,
    inputs: () => [{ ...health, kind: 'weak' }, { ...extensions, kind: 'weak' }],
    // UpgradeStatus is written as the upgrader writes it (upsert as the engine), not as this controller's output.
    outputs: () => [],
    async run(ctx) {
      while (await ctx.next()) {
        if (settled) continue;
        const looping = (await ctx.state.list(extensions))
          .map((r) => ({ name: r.metadata.id, e: r.spec as ExtensionStatusSpec }))
          .filter(({ e }) => crashLooping(e))
          .map(({ name, e }) => `${name} (${e.restarts} restarts${e.error ? `, last: ${e.error}` : ''})`);
        if (looping.length) {
          await settle(false, `its critical extension(s) restarted ${CRITICAL_RESTARTS} times or more: `
            + looping.join('; '));
          continue;
        }
        const h = (await ctx.state.list(health)).find((r) => r.metadata.id === HEALTH_ID);
        if (!h) continue;
        latest = h.spec as HealthStatusSpec;
        // Healthy for a while, not for a moment: a plugin that crashes soon after its start is "running" at first.
        if (!healthyForTrial(latest)) {
          clearTimeout(holding);
          holding = undefined;
        } else {
          holding ??= setTimeout(() => void settle(true), o.stableMs ?? HEALTHY_FOR_MS);
        }
      }
    },
  };
  return { controller, close() {
    clearTimeout(timer);
    clearTimeout(holding);
  } };
}
