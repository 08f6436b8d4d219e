// plugin-waves: in which order a machine starts its built-in plugins. On one vCPU, seven Node
// processes starting at once took turns for about ten seconds before the network plugin's DHCP
// client sent its first DISCOVER (bench:boot, 256 MiB, TCG: network configured at 25-28 s). So
// the plugins that make the machine reachable (Plugin.startFirst) start at once, with the one a config may come
// from (Plugin.lookForConfig: the platform plugin, when a source may hold one it did not read yet) and those that act
// on the machine config already in place (a config saved on STATE, or one PID 1 read from a source here before the
// plugins start, names its types: a machine configured to do something does it first); the others once every plugin
// started before them runs (or failed to) and a config that may come is settled (applied, kept, refused; one fetched
// over the network, or the network configured), or `capMs` after the first, whichever comes first.
// They no longer wait for the network milestone otherwise: the network plugin's DHCP client runs by then, and the
// CPU the milestone's last steps leave idle is theirs (bench:boot, icount, three runs each: network configured
// 2.276 -> 2.164 s, every plugin 2.978 -> 2.898 s). A config applied while they wait (from fw_cfg, a cloud's user
// data, the API) starts the ones it needs at once (`promote`), and the others wait for those too (one vCPU: three
// plugins starting with the config's took it from 0.5 to 0.75 s). The kernel's hardening does not wait with them:
// PID 1 writes it before any plugin starts.
import type { Logger } from '../../machinery/log.ts';
import type { ConfigComes, ConfigLook, Plugin } from '../../machinery/model/plugin.ts';
import type { SupervisedPlugin } from './supervisor.ts';

/**
 * The CPU priority (nice) of the plugins started with no reason to come first (not Plugin.startFirst, no config to
 * find, nothing more to publish: engine.ts) until the network is configured, every plugin runs or SECOND_WAVE_CAP_MS
 * has passed. On one vCPU their Node starts beside the network plugin's DHCP took the network milestone from ~2.00
 * to ~2.16 s (bench:boot, icount); at nice 5 the network plugin and PID 1 come first and the others still start at
 * once, the CPU they leave idle being theirs (measured in ARCHITECTURE.md).
 */
export const BACKGROUND_NICE = 5;

/** The longest the second wave waits for the first to run (on a fast machine that takes well under 1 s). */
export const SECOND_WAVE_CAP_MS = 15_000;

/** How long PID 1 waits for a plugin's look for a config (a seed on a slow CD-ROM): then it starts first instead. */
export const CONFIG_LOOK_MS = 2000;

/**
 * What `p` finds of a config for this machine without the network (Plugin.lookForConfig, asked once): one read, or
 * where one may still come from. A look that fails or takes longer than `timeoutMs` is answered `here` (the plugin
 * goes first, as it did before PID 1 looked and decides itself) and the why is logged.
 */
export async function lookForConfig(
  p: Pick<Plugin, 'name' | 'lookForConfig'>, params: Readonly<Record<string, string>>, log: Logger,
  timeoutMs = CONFIG_LOOK_MS,
): Promise<ConfigLook> {
  if (!p.lookForConfig) return {};
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ConfigLook>((resolve) => {
    timer = setTimeout(() => resolve({ comes: 'here', why: `no answer in ${timeoutMs / 1000} s` }), timeoutMs);
  });
  try {
    const look = await Promise.race([p.lookForConfig({ params }), late]);
    if (look.why) log.info(`plugins: looking for a config of ${p.name}'s: ${look.why}; it starts first`);
    return look;
  } catch (e) {
    log.warn(`plugins: looking for a config of ${p.name}'s: ${(e as Error).message}; it starts first`);
    return { comes: 'here' };
  } finally {
    clearTimeout(timer);
  }
}

export interface PluginWaves {
  /**
   * A machine config was applied and needs these plugins: those of the second wave still waiting start now (each
   * once). It settles a config on its way.
   */
  promote(names: readonly string[], why: string): void;
  /** The config on its way is settled (applied, kept, refused, none): the second wave waits for it no longer. */
  configSettled(): void;
  /** The network milestone is reached: a config on its way over the network is waited for no longer. */
  networkConfigured(): void;
  /**
   * A plugin's start ended (it runs, or it could not start): the second wave starts once the start of every
   * plugin started before it has ended.
   */
  startEnded(name: string): void;
  /** The machine stops: whatever has not started does not. */
  cancel(): void;
}

export function startInWaves(o: {
  first: readonly SupervisedPlugin[]; rest: readonly SupervisedPlugin[];
  start(plugins: readonly SupervisedPlugin[]): void;
  /** Told at once which plugins wait for the second wave (their status says so meanwhile). */
  wait?(plugins: readonly SupervisedPlugin[]): void;
  /**
   * A config may come from a plugin of the first wave, and from where (lookForConfig), or PID 1 is applying one it
   * read (`here`): the second wave also waits for it to be settled (`promote`, `configSettled`), or, for one from the
   * network, for the network milestone, so that its plugins start before the rest. One read without the network
   * comes sooner than the milestone (a fw_cfg file: ~0.1 s after the platform plugin runs, the milestone ~0.3 s): the
   * milestone does not let the rest go first.
   */
  configOnItsWay?: ConfigComes;
  log: Logger; capMs?: number;
}): PluginWaves {
  if (!o.first.length || !o.rest.length) {
    o.start([...o.first, ...o.rest]);
    return { promote: () => {}, configSettled: () => {}, networkConfigured: () => {}, startEnded: () => {},
      cancel: () => {} };
  }
  const names = (ps: readonly SupervisedPlugin[]) => ps.map((p) => p.name).join(', ');
  const capMs = o.capMs ?? SECOND_WAVE_CAP_MS;
  let waiting = [...o.rest];
  /** Started, neither running nor failed yet. */
  const starting = new Set(o.first.map((p) => p.name));
  /** Started before the second wave, in order: what its log line names. */
  const before = o.first.map((p) => p.name);
  /** What the second wave waits for besides those starts: a config on its way (settled, or the network is up). */
  let awaited: string | undefined = o.configOnItsWay ? 'the machine config' : undefined;
  /** What last let the second wave go, for its log line. */
  let released = '';
  const second = (why: string) => {
    clearTimeout(timer);
    if (!waiting.length) return;
    o.log.info(`plugins: starting ${names(waiting)}: ${why}`);
    o.start(waiting);
    waiting = [];
  };
  const secondIfDue = () => {
    if (starting.size || awaited) return;
    second(`${before.join(', ')} ${before.length === 1 ? 'runs' : 'run'} (or could not start)${released}`);
  };
  const settle = (why: string) => {
    if (!awaited) return;
    awaited = undefined;
    released = `; ${why}`;
    secondIfDue();
  };
  const orNetwork = o.configOnItsWay === 'network' ? ' (or the network configured)' : '';
  o.log.info(`plugins: ${names(o.first)} first; ${names(o.rest)} once those run`
    + `${awaited ? ` and ${awaited} is settled${orNetwork}` : ''} (${capMs / 1000} s at most)`);
  o.wait?.(o.rest);
  o.start(o.first);
  const timer = setTimeout(() => {
    const still = [...starting].map((n) => `${n} to run`);
    if (awaited) still.push(`${awaited} to be settled`);
    second(`waited ${capMs / 1000} s for ${still.join(', ')}`);
  }, capMs);
  return {
    promote: (wanted, why) => {
      const now = waiting.filter((p) => wanted.includes(p.name));
      if (!now.length) {
        settle('a machine config is in place');
        return;
      }
      waiting = waiting.filter((p) => !now.includes(p));
      for (const p of now) {
        starting.add(p.name);
        before.push(p.name);
      }
      o.log.info(`plugins: starting ${names(now)}: ${why}`);
      o.start(now);
      if (!waiting.length) clearTimeout(timer);
      settle('a machine config is in place');
    },
    configSettled: () => settle('the machine config is settled'),
    networkConfigured: () => {
      if (o.configOnItsWay === 'network') settle('the network is configured');
    },
    startEnded: (name) => {
      if (starting.delete(name)) secondIfDue();
    },
    cancel: () => {
      waiting = [];
      clearTimeout(timer);
    },
  };
}
