// engine-controllers: the engine's own work on the controller runtime the plugins use (cosi/controller/runtime.ts),
// listed here in one place as Talos lists its controllers. Each writes as the owner "engine", as before.
//   power-requests    a PowerRequest handed to PID 1 (power-requests.ts)
//   install-requests  an InstallRequest carried out, one at a time (install/installer.ts)
//   upgrade-requests  an UpgradeRequest: its bundle received and written to the other slot (upgrade/upgrader.ts)
//   rollback-requests a RollbackRequest: the other slot made the default (upgrade/upgrader.ts)
//   update-poller     an UpdatePolicy: its TUF repository polled, a release taken in its wave
//                     (upgrade/update-poller.ts)
//   metrics-endpoint  /metrics served where a MetricsEndpoint says (metrics.ts)
//   console-summary   the console's summary line, on its kinds' changes (console-summary.ts)
//   log-sinks         a sender per LogSink, and their statuses (log/sink.ts)
//   platform-config   the platform's user data applied as the machine config (platform-config.ts)
//   health            Health "machine" and the boot milestones, from the kinds a ready machine needs (health.ts)
//   api-certificate   the API's certificate issued again on a new CA or name, its limits (api/certificate.ts)
//   upgrade-trial     on a boot that tries an upgrade: healthy long enough, the slot is good (upgrade/trial.ts)
//   extension-spec    the extensions users declare, run as plugins (extension/extension-spec.ts): registered on
//                     the same runtime once the plugin socket listens, as their processes connect to it
// What still watches the state by itself: the shutdown hold (a bounded wait inside the shutdown, not a controller).
import type { Controller } from '../../cosi/controller/contract.ts';
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import type { State } from '../../cosi/state/state.ts';
import type { SpecCodecs } from '../../cosi/spec/spec-codec.ts';
import type { Logger } from '../../machinery/log.ts';
import { installRequests, type InstallerOptions } from '../install/installer.ts';
import type { Upgrader } from '../upgrade/upgrader.ts';
import { updatePoller } from '../upgrade/update-poller.ts';
import { powerRequests, type OnPowerRequest } from './power-requests.ts';
import { metricsEndpoint, type MetricsSources } from './metrics.ts';
import type { ApiTls } from './api/front-door.ts';
import { consoleSummary } from './console-summary.ts';
import type { LogBook } from './log/book.ts';
import { logSinks } from './log/sink.ts';
import { platformConfig, type UserDataWiring } from './platform-config.ts';
import { healthController, type HealthOptions } from './health.ts';
import type { MemoryState } from '../../cosi/state/memory-state.ts';

export interface EngineControllerParts {
  owner: string;
  log: Logger;
  state: MemoryState;
  onPowerRequest?: OnPowerRequest;
  installer: InstallerOptions;
  upgrader: Upgrader;
  /** Where the update poller keeps what lasts between boots, or why this engine polls nothing. */
  updatesDir: string | { refuse: string };
  metrics: Omit<MetricsSources, 'state'> & { tls: () => ApiTls };
  /** Where the console's summary line goes. */
  announce: (line: string) => void;
  /** The log rings the sinks send from. */
  logs: LogBook;
  userData: UserDataWiring;
  health: HealthOptions;
  /** Made with the certificate the API starts with (api/certificate.ts). */
  apiCertificate: Controller;
  /** Made from the upgrade's record at the start, when this boot tries an upgrade (upgrade/trial.ts). */
  trial?: Controller;
}

/** The engine's controllers, in one list. */
export function engineControllers(p: EngineControllerParts): Controller[] {
  return [
    powerRequests({
      owner: p.owner, log: p.log.child('power'), ...(p.onPowerRequest ? { onPowerRequest: p.onPowerRequest } : {}),
    }),
    installRequests(p.installer),
    ...p.upgrader.controllers,
    updatePoller({ owner: p.owner, log: p.log.child('updates'), dir: p.updatesDir, upgrader: p.upgrader }),
    metricsEndpoint({ ...p.metrics, state: p.state, log: p.log, owner: p.owner }),
    consoleSummary(p.state, p.announce, p.owner),
    logSinks({ state: p.state, book: p.logs, owner: p.owner, log: p.log.child('logs') }),
    platformConfig({ ...p.userData, owner: p.owner }),
    healthController(p.health),
    p.apiCertificate,
    ...(p.trial ? [p.trial] : []),
  ];
}

/** A runtime running `controllers` on the engine's state; resolves once each watches its inputs. */
export async function startEngineControllers(
  state: State, codecs: SpecCodecs, log: Logger, controllers: readonly Controller[],
): Promise<ControllerRuntime> {
  const runtime = new ControllerRuntime(state, {
    log: (name) => log.child(name),
    normalize: (type, spec) => codecs.get(type)?.normalize(spec) ?? spec,
  });
  for (const c of controllers) runtime.register(c);
  runtime.start();
  await runtime.watching();
  return runtime;
}
