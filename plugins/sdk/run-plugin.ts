// run-plugin: the process side of a plugin. Connects to the engine's plugin socket
// (COSI_PLUGIN_SOCKET) with the ordinary COSI State client, runs the controllers,
// and stops cleanly on SIGTERM.
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import { RemoteState } from '../../cosi/remote/client.ts';
import { confine } from './confine.ts';
import {
  controllerStats, PLUGIN_READY_LINE, pluginLine, pluginStatsLine, type LineLevel, type Plugin,
} from '../../machinery/model/plugin.ts';
import type { SpecCodecs } from '../../cosi/spec/spec-codec.ts';
import { StartSteps } from './start-steps.ts';

/** How long a plugin waits for the engine to answer one state call (not a watch). */
export const PLUGIN_CALL_DEADLINE_MS = 30_000;
/** Every controller of a plugin reconciles at least this often. */
export const PLUGIN_RESYNC_MS = 20_000;

export const PLUGIN_SOCKET_ENV = 'COSI_PLUGIN_SOCKET';
/** How often a plugin prints its controllers' figures (when they changed). */
const STATS_EVERY_MS = 5000;

const line = (level: LineLevel, who: string, msg: string) => {
  process.stderr.write(`${pluginLine(level, `${who}: ${msg}`)}\n`);
};

export async function runPlugin(p: Plugin, codecs: SpecCodecs, steps = new StartSteps()): Promise<number> {
  const socket = process.env[PLUGIN_SOCKET_ENV];
  if (!socket) {
    line('error', p.name, `${PLUGIN_SOCKET_ENV} is not set: plugins are started by the engine`);
    return 2;
  }
  // Privileges go first, before the plugin talks to anyone.
  try {
    const { withheld } = confine(p);
    if (withheld.length) line('warning', p.name, `running without ${withheld.join(', ')}: this host withholds them`);
    steps.mark('confine');
  } catch (e) {
    line('error', p.name, `cannot confine itself: ${(e as Error).message}`);
    return 1;
  }
  // A call the engine never answers must not stall a controller for good: past the deadline it fails, the runtime
  // restarts the controller (logged), and its next reconcile does the work. (dhcp.test's 256 MiB case once found
  // the address controller waiting on one call for over a minute, its last four specs never applied.)
  const state = new RemoteState(`unix://${socket}`, { codecs, timeoutMs: PLUGIN_CALL_DEADLINE_MS });
  await state.waitReady(10_000);
  steps.mark('connect');
  const runtime = new ControllerRuntime(state, {
    // A wake-up the engine's watches lost costs at most this long (dhcp.test's 256 MiB case lost some under load:
    // the address controller slept through four new addresses; not explained yet, see shared-watches.ts).
    resyncMs: PLUGIN_RESYNC_MS,
    // Reads of the kinds the controllers use come from watches of them: most of a plugin's calls were reads.
    mirror: true,
    normalize: (type, spec) => codecs.get(type)?.normalize(spec) ?? spec,
    log: (c) => ({
      info: (m) => line('info', c, m), warn: (m) => line('warning', c, m), error: (m) => line('error', c, m),
    }),
  });
  for (const c of p.controllers()) runtime.register(c);
  runtime.start();
  // Ready once every controller watches its inputs: from then on no change goes unseen.
  await runtime.watching();
  steps.mark('watches');
  line('info', p.name, `running ${p.controllers().length} controller(s) on ${runtime.openWatches} watch(es) `
    + `(start: ${steps})`);
  process.stdout.write(`${PLUGIN_READY_LINE}\n`);
  // Signal listeners do not keep Node alive; a plugin without input watches would
  // otherwise exit as soon as its first reconcile is done.
  const alive = setInterval(() => {}, 1 << 30);
  // The controllers' figures for the engine's metrics, when they changed.
  let said = '';
  const stats = setInterval(() => {
    const line = pluginStatsLine(controllerStats(runtime.statuses()));
    if (line !== said) process.stdout.write(`${line}\n`);
    said = line;
  }, STATS_EVERY_MS);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  clearInterval(alive);
  clearInterval(stats);
  await runtime.stop();
  state.close();
  return 0;
}
