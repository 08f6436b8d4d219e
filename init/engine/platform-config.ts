// platform-config: the user data the platform plugin found (UserData "machine"), or PID 1 read first on its behalf
// (Plugin.lookForConfig), -> the machine config. cloud-init input is translated here (machinery/config/cloud-init) and
// applied as the whole config, with what was ignored listed in ConfigStatus. A
// persisted config wins while the platform's instance id is the one it was saved with
// (or neither has one); on a new instance the platform's user data replaces it.
import { ConfigRefused } from '../../machinery/config/validate-config.ts';
import { translateUserData } from '../../machinery/config/cloud-init/user-data.ts';
import type { InstanceData } from '../../machinery/config/cloud-init/jinja.ts';
import type { Logger } from '../../machinery/log.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import type { UserDataSpec } from '../../proto/gen/spec-types.ts';
import type { MachineConfig } from './config/machine-config.ts';
import type { SavedConfig } from '../../machinery/config/saved-config.ts';
import { PLATFORM_NS, USER_DATA_TYPE } from '../../proto/gen/resource-types.ts';
import { USER_DATA_ID } from '../../machinery/model/singleton-ids.ts';

export interface PlatformConfigOptions {
  config: MachineConfig;
  /** The config persisted on STATE and applied at boot, if any. */
  persisted: SavedConfig | undefined;
  log: Logger;
}

/** What to do with user data, given the persisted config (pure). */
export function decide(u: UserDataSpec, persisted: SavedConfig | undefined):
  { apply: true; replacing?: string } | { apply: false; why: string } {
  if (u.problem) return { apply: true };
  if (u.format === 'empty') return { apply: false, why: `${u.source} has no user data` };
  if (!persisted) return { apply: true };
  const saved = persisted.instanceId ?? '';
  if (saved === u.instanceId) {
    const why = u.instanceId ? `instance ${u.instanceId} is the one it was saved on`
      : 'neither it nor the platform names an instance';
    return { apply: false, why: `the persisted config is kept: ${why} (the user data from ${u.source} is not used)` };
  }
  return { apply: true, replacing: `a new instance (${u.instanceId || 'none'}; the persisted config was saved on `
    + `${saved || 'none'}): the user data from ${u.source} replaces the persisted config` };
}

/** What tells one user data from another (a rewrite of the same is no news). */
const keyOf = (u: UserDataSpec) => `${u.source}/${u.instanceId}/${u.digest}/${u.problem}`;

/** The instance data the platform plugin gave with the user data (for a Jinja template). */
const instanceData = (u: UserDataSpec) => (u.instanceData ? JSON.parse(u.instanceData) as InstanceData : undefined);

/** The platform's user data, taken once each: what PID 1 read before the plugins started, then the UserData. */
export interface UserDataTaker {
  /**
   * Takes `u` unless it is what was taken last (the platform plugin rewriting what PID 1 read first, or the same
   * again, is no news: false). Resolves true once what came of it (applied, kept, refused) is in ConfigStatus and
   * the log; it never rejects (what went wrong is logged).
   */
  take(u: UserDataSpec): Promise<boolean>;
}

export function userDataTaker(o: PlatformConfigOptions): UserDataTaker {
  let last = '';
  const take = async (u: UserDataSpec) => {
    const d = decide(u, o.persisted);
    if (!d.apply) {
      o.log.info(d.why);
      return;
    }
    if (d.replacing) o.log.warn(d.replacing);
    if (u.problem) {
      await o.config.refuse(u.source, [`${u.source}: user data ${u.problem}`]);
      return;
    }
    const t = await translateUserData(new TextEncoder().encode(u.content), instanceData(u));
    if (!t.ok) {
      await o.config.refuse(u.source, [`${u.source}: ${t.message}`]);
      return;
    }
    try {
      await o.config.apply({
        bytes: new TextEncoder().encode(t.data.config), mode: 'replace', source: u.source,
        sourceName: `${u.source} (${t.data.format})`, instanceId: u.instanceId,
        ignored: [...(u.ignored ?? []), ...t.data.ignored], ...(d.replacing ? { note: d.replacing } : {}),
      });
    } catch (e) {
      // A refused config is already in ConfigStatus and the log; anything else is logged here.
      if (!(e instanceof ConfigRefused)) o.log.error(`the user data from ${u.source}: ${(e as Error).message}`);
    }
  };
  return {
    async take(u) {
      const key = keyOf(u);
      if (key === last) return false;
      last = key;
      await take(u).catch((err: Error) => o.log.error(`platform config: ${err.message}`));
      return true;
    },
  };
}

export interface UserDataWiring {
  taker: UserDataTaker;
  /** The user data was taken, whatever came of it (applied, kept, refused): plugin-waves.ts waits for that. */
  onSettled?: () => void;
}

/** Applies the platform's user data as it comes and changes: a controller of the engine's (engine-controllers.ts). */
export function platformConfig(o: UserDataWiring & { owner: string }): Controller {
  const userData = { namespace: PLATFORM_NS, type: USER_DATA_TYPE, id: USER_DATA_ID };
  return {
    name: 'platform-config', owner: o.owner,
    inputs: () => [{ ...userData, kind: 'weak' }],
    outputs: () => [],
    async run(ctx) {
      while (await ctx.next()) {
        const u = (await ctx.state.find(userData))?.spec as UserDataSpec | undefined;
        if (!u || !(await o.taker.take(u))) continue;
        // Settled when what was taken is still the platform's word: newer user data is taken next, and settles then.
        const now = (await ctx.state.find(userData))?.spec as UserDataSpec | undefined;
        if (now && keyOf(now) === keyOf(u)) o.onSettled?.();
      }
    },
  };
}
