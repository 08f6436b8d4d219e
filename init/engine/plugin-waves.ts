// plugin-waves: in which order a machine starts its built-in plugins. On one vCPU, seven Node
// processes starting at once took turns for about ten seconds before the network plugin's DHCP
// client sent its first DISCOVER (bench:boot, 256 MiB, TCG: network configured at 25-28 s). So
// the plugins that make the machine reachable and find its config (Plugin.startFirst) start at
// once, with those that act on the machine config already in place (a config saved on STATE names its
// types: a machine configured to do something does it first); the others when the network milestone is
// reached (health.ts) and the plugins started before them run (or failed to), or `capMs` after the first, whichever
// comes first: a machine with nothing to configure on its network, or whose network waits for something the others do,
// is not held up for longer. A config applied while they wait (from fw_cfg, a cloud's user data, the API) starts
// the ones it needs at once (`promote`), and the others wait for those too (one vCPU: three plugins starting with
// the config's took it from 0.5 to 0.75 s). The kernel's hardening does not wait with them: PID 1 writes it before
// any plugin starts.
import type { Logger } from '../../machinery/log.ts';
import type { SupervisedPlugin } from './supervisor.ts';

/** The longest the second wave waits for the network (on a fast machine the milestone takes ~1 s). */
export const SECOND_WAVE_CAP_MS = 15_000;

export interface PluginWaves {
  /** The network milestone is reached: the second wave starts now (once). */
  networkConfigured(): void;
  /** A machine config needs these plugins: those of the second wave still waiting start now (each once). */
  promote(names: readonly string[], why: string): void;
  /**
   * A plugin's start ended (it runs, or it could not start): the second wave, when due, waits for the start of every
   * plugin started before it to end.
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
  log: Logger; capMs?: number;
}): PluginWaves {
  if (!o.first.length || !o.rest.length) {
    o.start([...o.first, ...o.rest]);
    return { networkConfigured: () => {}, promote: () => {}, startEnded: () => {}, cancel: () => {} };
  }
  const names = (ps: readonly SupervisedPlugin[]) => ps.map((p) => p.name).join(', ');
  const capMs = o.capMs ?? SECOND_WAVE_CAP_MS;
  let waiting = [...o.rest];
  /** Started, neither running nor failed yet. */
  const starting = new Set(o.first.map((p) => p.name));
  /** Why the second wave is due while it waits for `starting`. */
  let due: string | undefined;
  const second = (why: string, force = false) => {
    if (starting.size && !force) {
      due = why;
      return;
    }
    clearTimeout(timer);
    due = undefined;
    if (!waiting.length) return;
    o.log.info(`plugins: starting ${names(waiting)}: ${why}`);
    o.start(waiting);
    waiting = [];
  };
  o.log.info(`plugins: ${names(o.first)} first; ${names(o.rest)} once the network is configured and those run `
    + `(${capMs / 1000} s at most)`);
  o.wait?.(o.rest);
  o.start(o.first);
  const capped = () => (due ? `${due}; ${[...starting].join(', ')} still starting after ${capMs / 1000} s`
    : `the network is not configured after ${capMs / 1000} s`);
  const timer = setTimeout(() => second(capped(), true), capMs);
  return {
    networkConfigured: () => second('the network is configured'),
    promote: (wanted, why) => {
      const now = waiting.filter((p) => wanted.includes(p.name));
      if (!now.length) return;
      waiting = waiting.filter((p) => !now.includes(p));
      for (const p of now) starting.add(p.name);
      o.log.info(`plugins: starting ${names(now)}: ${why}`);
      o.start(now);
      if (!waiting.length) clearTimeout(timer);
    },
    startEnded: (name) => {
      starting.delete(name);
      if (!starting.size && due) second(due);
    },
    cancel: () => {
      waiting = [];
      due = undefined;
      clearTimeout(timer);
    },
  };
}
