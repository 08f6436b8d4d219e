// plugin-waves: in which order a machine starts its built-in plugins. On one vCPU, seven Node
// processes starting at once took turns for about ten seconds before the network plugin's DHCP
// client sent its first DISCOVER (bench:boot, 256 MiB, TCG: network configured at 25-28 s). So
// the plugins that make the machine reachable and find its config (Plugin.startFirst) start at
// once, and the others when the network milestone is reached (health.ts), or `capMs` after the
// first, whichever comes first: a machine with nothing to configure on its network, or whose
// network waits for something the others do, is not held up for longer. The kernel's hardening
// does not wait with them: PID 1 writes it before any plugin starts.
import type { Logger } from '../../machinery/log.ts';
import type { SupervisedPlugin } from './supervisor.ts';

/** The longest the second wave waits for the network (on a fast machine the milestone takes ~1 s). */
export const SECOND_WAVE_CAP_MS = 15_000;

export interface PluginWaves {
  /** The network milestone is reached: the second wave starts now (once). */
  networkConfigured(): void;
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
    return { networkConfigured: () => {}, cancel: () => {} };
  }
  const names = (ps: readonly SupervisedPlugin[]) => ps.map((p) => p.name).join(', ');
  const capMs = o.capMs ?? SECOND_WAVE_CAP_MS;
  let pending = true;
  const second = (why: string) => {
    if (!pending) return;
    pending = false;
    clearTimeout(timer);
    o.log.info(`plugins: starting ${names(o.rest)}: ${why}`);
    o.start(o.rest);
  };
  o.log.info(`plugins: ${names(o.first)} first; ${names(o.rest)} once the network is configured `
    + `(${capMs / 1000} s at most)`);
  o.wait?.(o.rest);
  o.start(o.first);
  const timer = setTimeout(() => second(`the network is not configured after ${capMs / 1000} s`), capMs);
  return {
    networkConfigured: () => second('the network is configured'),
    cancel: () => {
      pending = false;
      clearTimeout(timer);
    },
  };
}
