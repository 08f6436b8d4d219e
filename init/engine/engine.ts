// engine: PID 1's heart, also runnable on a host (`serve`). It owns the resource
// state, registers every type the system serves, publishes what it knows itself
// (version, kernel command line, boot status, plugin statuses), serves the COSI
// API, and supervises the plugins it is handed.
import { join } from 'node:path';
import type { Native } from '../../native/index.ts';
import {
  DEFINITION_TYPE, META_NAMESPACE, META_OWNER, type ResourceDefinitionSpec,
} from '../../cosi/meta/definition.ts';
import { registerNamespace, registerTypes } from '../../cosi/meta/registry.ts';
import { definitionCodecs } from '../../cosi/remote/definition-codecs.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { upsert } from '../../cosi/state/upsert.ts';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import type { Logger } from '../../machinery/log.ts';
import {
  controllerStats, everyController, HOST_MODE_ENV, pluginOutputs, pluginWriters, servedTypes, type Plugin,
} from '../../machinery/model/plugin.ts';
import { StateError } from '../../cosi/state/errors.ts';
import {
  ENGINE_TYPES, NAMESPACES, type BootStatusSpec, type KernelCmdlineSpec, type PluginStatusSpec, type PowerAction,
  type RegistryCredentialSpec,
} from '../../machinery/model/runtime-types.ts';
import { specMessages, withSchemas } from '../../machinery/model/spec-codecs.ts';
import { serversOf } from '../../machinery/model/definitions.ts';
import type { Cmdline } from '../../machinery/sys/cmdline.ts';
import { memoryConfigStore, type ConfigStore } from '../../machinery/config/saved-config.ts';
import { createAdmission } from '../../machinery/config/admission.ts';
import { configServiceMethods } from './config/config-service.ts';
import { MachineConfig } from './config/machine-config.ts';
import { callerOf, startApiServer, type ApiServer } from './api/server.ts';
import { createApiAccess } from './api/access.ts';
import { apiCertificate } from './api/certificate.ts';
import {
  BACKGROUND_NICE, lookForConfig, SECOND_WAVE_CAP_MS, startInWaves, type PluginWaves,
} from './plugin-waves.ts';
import { userDataTaker } from './platform-config.ts';
import { builtinPlugin, ENGINE_OWNER, PluginSupervisor, pluginOfLogPrefix, type SpawnPlugin } from './supervisor.ts';
import type { InstallerMachine } from '../install/installer.ts';
import { engineControllers, startEngineControllers } from './engine-controllers.ts';
import type { Milestone } from './health.ts';
import type { OnPowerRequest } from './power-requests.ts';
import { startUpgrader, type UpgradeMachine } from '../upgrade/upgrader.ts';
import { upgradeServiceMethods } from '../upgrade/upgrade-service.ts';
import { startTrial } from '../upgrade/trial.ts';
import { publishVersions } from '../upgrade/versions.ts';
import { AUDIT_SOURCE, DEFAULT_RING_BYTES, LogBook } from './log/book.ts';
import {
  DEFAULT_SHUTDOWN_GRACE_MS, SHUTDOWN_GRACE_PARAM, startShutdownHold, type HoldOptions,
} from './shutdown-hold.ts';
import { logServiceMethods } from './log/service.ts';
import { machineServiceMethods } from './machine-service.ts';
import { extensionSpec } from './extension/extension-spec.ts';
import { declareImageExtensions } from './extension/image-extensions.ts';
import { ExtensionTypeBook, registerExtensionTypes, type ExtensionMachine } from './extension/types.ts';
import { ExtensionPushes, readPersistedOverrides } from './extension/extension-push.ts';
import { extensionServiceMethods } from './extension/extension-service.ts';
import { extensionOverrideKeep } from './extension/extension-override-keep.ts';
import { currentTrust } from '../upgrade/trust.ts';
import type { CallContext } from '../../cosi/remote/grpc/server.ts';
import {
  BOOT_STATUS_TYPE, CONFIG_NS, KERNEL_CMDLINE_TYPE, PLATFORM_METADATA_TYPE, PLATFORM_NS, PLUGIN_STATUS_TYPE,
  REGISTRY_CREDENTIAL_TYPE, RUNTIME_NS, EXTENSION_OVERRIDE_TYPE,
} from '../../proto/gen/resource-types.ts';
import { PLATFORM_ID } from '../../machinery/model/singleton-ids.ts';

export interface EngineOptions {
  log: Logger;
  native: Native;
  listen: string;
  pluginSocket: string;
  cmdline: { raw: string; params: Cmdline };
  spawn: SpawnPlugin;
  /** The plugins to register and run (the caller picks them: plugins/index.ts). */
  plugins: readonly Plugin[];
  /** false: register the plugins' types but start none (benchmarks). Default true. */
  startPlugins?: boolean;
  /** Running on a host (`serve`), not as the machine's PID 1: plugins act on nothing by themselves. */
  hostMode?: boolean;
  /**
   * Called for each PowerRequest created through the API (PID 1: the graceful shutdown, which first
   * calls the engine's prepareShutdown with `hold`).
   */
  onPowerRequest?: OnPowerRequest;
  /** Where the machine config persists (PID 1: the STATE filesystem); default: memory only. */
  configStore?: ConfigStore;
  /** A machine config applied before the API serves (`serve --config FILE`); a refused one stops the start. */
  config?: { bytes: Uint8Array; name: string };
  /** A line for whoever watches the console (the maintenance certificate's fingerprint); default: the log. */
  announce?: (line: string) => void;
  /** PID 1: what the installer acts on (InstallRequests). Absent: every request is refused, nothing touched. */
  installer?: InstallerMachine;
  /** Where the update poller keeps the metadata TUF trusts, the seed and failed versions (PID 1: on /var). */
  updatesDir?: string;
  /** PID 1 booted from a slot of an installed disk: its ESP and what an upgrade needs. Absent: none. */
  upgrade?: UpgradeMachine;
  /** Why there are no slots to upgrade (a live system, a kernel booted by QEMU); default: a host's reason. */
  noUpgradeWhy?: string;
  /** PID 1: where extensions' images are kept and mounted, and their cgroups. Absent: every one is refused. */
  extensions?: ExtensionMachine;
  /**
   * PID 1: where the booted system's payload is (its boot slot, or /appliance in a live initramfs) and how to name
   * it: its extensions are declared before any config, its config applied at the first boot. Absent: none.
   */
  payload?: { dir: string; from: string };
  /** Plugin restart backoff (tests shorten it). */
  backoff?: { initialMs: number; factor: number; maxMs: number };
  /** Called the first time each boot milestone is reached (PID 1 prints it for bench:boot). */
  onMilestone?: (m: Milestone) => void;
  /** Where LogService reads the kernel log; default /dev/kmsg. */
  kmsgPath?: string;
}

export interface Engine {
  readonly state: MemoryState;
  readonly api: ApiServer;
  readonly config: MachineConfig;
  setBootStatus(s: BootStatusSpec): Promise<void>;
  /** A shutdown begins: MachineStatus says so, and the ShutdownRequest's holders are waited for. */
  prepareShutdown(action: PowerAction, reason: string, hold?: HoldOptions): Promise<void>;
  stop(): Promise<void>;
}

const STOPPING_WORDS: Record<PowerAction, string> = { reboot: 'rebooting', poweroff: 'powering off', halt: 'halting' };

/** Cmdline parameter: each log ring's size in KiB (engine, each plugin). */
export const LOG_RING_PARAM = 'appliance.log_ring_kib';

/** A whole number the cmdline gives in [min, max], or `fallback` with a line saying why not. */
function integerParam(
  params: Cmdline, name: string, r: { min: number; max: number; fallback: number; unit: string }, log: Logger,
): number {
  const raw = params.get(name);
  if (raw === undefined) return r.fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= r.min && n <= r.max) return n;
  log.warn(`${name}=${raw}: not a whole number of ${r.unit} from ${r.min} to ${r.max}; using ${r.fallback}`);
  return r.fallback;
}

export async function startEngine(options: EngineOptions): Promise<Engine> {
  // Every line from here on is kept as well, in the ring of the engine or of the plugin it came from.
  const ringKiB = integerParam(options.cmdline.params, LOG_RING_PARAM,
    { min: 4, max: 65536, fallback: DEFAULT_RING_BYTES / 1024, unit: 'KiB' }, options.log);
  const logs = new LogBook({ ringBytes: ringKiB * 1024, kmsgPath: options.kmsgPath ?? '/dev/kmsg' });
  logs.ring(AUDIT_SOURCE); // listed (`cosictl logs`) from the start, empty until the first write
  for (const p of options.plugins) logs.ring(p.name);
  const o = { ...options, log: logs.capture(options.log, pluginOfLogPrefix) };
  const definitionOf = (type: string) =>
    state.findSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() })
      ?.spec as ResourceDefinitionSpec | undefined;
  // Definitions are admitted only when their message is usable: one that is not here is a bug worth a line.
  const codecs = definitionCodecs(specMessages(), definitionOf,
    (d, e) => o.log.error(`type ${d.type}: its spec travels as YAML only: ${e.message}`));
  const state: MemoryState = new MemoryState({
    normalize: (type, spec) => (codecs.get(type)?.normalize(spec) ?? spec),
  });
  for (const [ns, description] of Object.entries(NAMESPACES)) await registerNamespace(state, ns, description);
  for (const p of o.plugins) {
    for (const [ns, description] of Object.entries(p.namespaces?.() ?? {})) {
      await registerNamespace(state, ns, description);
    }
  }
  const served = servedTypes(o.plugins);
  await registerTypes(state, withSchemas(served));
  const own = (type: string, id: string, spec: unknown) =>
    state.create(newResource({ namespace: RUNTIME_NS, type, id }, spec), { owner: ENGINE_OWNER });
  const slotsChanged = () => publishVersions(state, ENGINE_OWNER, o.upgrade?.boot);
  await slotsChanged();
  await own(KERNEL_CMDLINE_TYPE, 'current', {
    raw: o.cmdline.raw, params: Object.fromEntries(o.cmdline.params),
  } satisfies KernelCmdlineSpec);
  await own(BOOT_STATUS_TYPE, 'boot', { phase: 'booting', ready: false } satisfies BootStatusSpec);
  const spawnPlugin = o.hostMode
    ? ((args, env, so) => o.spawn(args, { ...env, [HOST_MODE_ENV]: '1' }, so)) satisfies SpawnPlugin
    : o.spawn;
  // Started once the API serves (below), in waves (plugin-waves.ts): the health controller's network milestone and
  // the platform's config settle the second; a config that needs some starts them at once.
  let waves: PluginWaves | undefined;
  const supervisor = new PluginSupervisor({
    state, log: o.log, spawn: spawnPlugin, socketPath: o.pluginSocket, ...(o.backoff ? { backoff: o.backoff } : {}),
    onRunStart: (name) => logs.ring(name).startRun(),
    // After the status it publishes, and in a turn of its own: the second wave's forks come after what waits on it.
    onStartEnded: (name) => setImmediate(() => waves?.startEnded(name)),
  });
  const admission = createAdmission(state);
  const extensionMachine = o.extensions ?? {
    refuse: o.hostMode ? 'this engine runs on a host (serve): it runs no extensions' : 'this engine runs no extensions',
  };
  const extensionTypes = new ExtensionTypeBook(extensionMachine, (registry) => state.findSync({
    namespace: CONFIG_NS, type: REGISTRY_CREDENTIAL_TYPE, id: registry,
  })?.spec as RegistryCredentialSpec | undefined);
  const pushes = new ExtensionPushes({
    state, log: o.log.child('extensions'),
    imagesDir: 'refuse' in extensionMachine ? extensionMachine : extensionMachine.imagesDir,
    trustedKeys: async () => (await currentTrust(state)).keys,
  });
  const pluginNames = new Set(o.startPlugins === false ? [] : o.plugins.map((p) => p.name));
  /** The plugins that act on the machine config's resources (the types they serve): its milestone waits for them. */
  let configPlugins: readonly string[] = [];
  const config = new MachineConfig({
    state, log: o.log.child('config'), admission, codecs, owner: ENGINE_OWNER,
    extensions: {
      book: extensionTypes, register: (name, types) => registerExtensionTypes(state, admission, name, types),
    },
    store: o.configStore ?? memoryConfigStore('no STATE filesystem'),
    currentInstanceId: () => (state.findSync({ namespace: PLATFORM_NS, type: PLATFORM_METADATA_TYPE, id: PLATFORM_ID })
      ?.spec as { instanceId?: string } | undefined)?.instanceId ?? '',
    onApplied: (types) => {
      configPlugins = serversOf(types).filter((s) => pluginNames.has(s));
      waves?.promote(configPlugins, 'the machine config needs them');
    },
  });
  // The system's own extensions before any config: a config may name the types they define.
  const image = o.payload ? await declareImageExtensions({
    state, log: o.log, dir: o.payload.dir, from: o.payload.from, owner: ENGINE_OWNER,
    learn: (name, spec) => extensionTypes.learn(name, spec),
    register: (name, types) => registerExtensionTypes(state, admission, name, types),
  }) : undefined;
  // Before the plugins start: they find the config in place, as if it had always been.
  const persisted = await config.loadPersisted();
  // The config the system carries is the machine's first: a machine with a config of its own keeps it.
  if (!persisted && image?.config) {
    await config.apply({ bytes: image.config.bytes, mode: 'replace', source: 'image', sourceName: image.config.name })
      .catch((e: Error) => o.log.error(`the first-boot config (${image.config!.name}): ${e.message}`));
  }
  // The platform plugin's user data, when it finds some, after that.
  if (o.config) {
    await config.apply({ bytes: o.config.bytes, mode: 'replace', source: 'file', sourceName: o.config.name });
  }
  const userData = userDataTaker({ config, persisted, log: o.log.child('config') });
  // What a plugin finds of a config without the network (Plugin.lookForConfig: fw_cfg, the command line, a seed
  // volume) is read now, as the config on STATE was, so the plugins acting on it start with the first wave; where one
  // may still come from decides which start first below. Not waited for: a config's extensions may wait for the
  // network (machine-config.ts), which the plugins bring. On a host nothing is probed.
  const params = Object.fromEntries(o.cmdline.params);
  const looks = o.startPlugins === false || o.hostMode ? [] : await Promise.all(o.plugins.map(async (p) =>
    ({ name: p.name, look: await lookForConfig(p, params, o.log) })));
  const readHere = looks.flatMap((l) => (l.look.userData ? [l.look.userData] : []));
  for (const u of readHere) o.log.info(`config: ${u.source} read before the plugins start`);
  let readHereSettled = !readHere.length;
  void Promise.all(readHere.map((u) => userData.take(u))).then(() => {
    readHereSettled = true;
    waves?.configSettled();
  });
  const owners = new Set([ENGINE_OWNER, META_OWNER, ...o.plugins.flatMap(everyController).map((c) => c.name)]);
  // Plugins that only transform state run here (Plugin.inEngine), each on a runtime of its own whose lines go to its
  // log ring; the others are processes the supervisor starts, and their merges (Plugin.engineControllers) run here.
  const onEngine = o.startPlugins === false ? [] : o.plugins
    .map((p) => ({ p, controllers: p.inEngine ? everyController(p) : p.engineControllers?.() ?? [] }))
    .filter((e) => e.p.inEngine || e.controllers.length);
  const runsInEngine = new Set(onEngine.filter((e) => e.p.inEngine).map((e) => e.p.name));
  const inEngineRuntimes = await Promise.all(onEngine.map(async ({ p, controllers }) => {
    if (p.inEngine) {
      await upsert(state, { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: p.name },
        { state: 'running', pid: process.pid, restarts: 0, outputs: pluginOutputs(p) } satisfies PluginStatusSpec,
        ENGINE_OWNER);
    }
    return { plugin: p.name, runtime: await startEngineControllers(state, codecs, o.log.child(`plugin/${p.name}`),
      controllers) };
  }));
  const accessOf = createApiAccess(definitionOf, (owner) => owners.has(owner));
  const announce = o.announce ?? ((l: string) => o.log.info(l));
  const certificate = await apiCertificate({ state, log: o.log.child('api'), owner: ENGINE_OWNER, announce });
  const upgrader = await startUpgrader({
    state, log: o.log.child('upgrade'), owner: ENGINE_OWNER, slotsChanged,
    machine: o.upgrade ?? { refuse: o.hostMode ? 'this engine runs on a host (serve): it upgrades nothing'
      : o.noUpgradeWhy ?? 'this machine was not booted from a boot slot of an installed disk' },
  });
  // A boot that tries an upgrade follows its health checks with a controller of the list below.
  const trial = o.upgrade ? await startTrial({
    state, log: o.log.child('upgrade'), owner: ENGINE_OWNER, boot: o.upgrade.boot, reboot: o.upgrade.reboot,
    slotsChanged,
  }) : undefined;
  // Before the API serves: a request a client makes as soon as it can is seen.
  const controllers = await startEngineControllers(state, codecs, o.log, engineControllers({
    owner: ENGINE_OWNER, log: o.log, upgrader, state, announce, logs, apiCertificate: certificate.controller,
    updatesDir: o.updatesDir ?? { refuse: 'this engine has no place to keep update metadata' },
    ...(trial?.controller ? { trial: trial.controller } : {}),
    health: {
      owner: ENGINE_OWNER, apiServing: () => true,
      expectedPlugins: [...pluginNames], configPlugins: () => configPlugins,
      // The milestone's own figures first: the second wave's processes may be forked after them.
      onMilestone: (m) => {
        o.onMilestone?.(m);
        if (m === 'network') waves?.networkConfigured();
        // The network configured, or every plugin running without it: nothing is ahead of the rest any more.
        if (m === 'network' || m === 'plugins') supervisor.foreground();
      },
    },
    userData: { taker: userData, onSettled: () => waves?.configSettled() },
    // Read at scrape time only, once the API below serves.
    metrics: { api: () => api.stats(), logs, controllers: () => [...supervisor.controllerStats(),
      ...inEngineRuntimes.map((r) => ({ plugin: r.plugin, controllers: controllerStats(r.runtime.statuses()) }))],
      tls: () => certificate.tls },
    ...(o.onPowerRequest ? { onPowerRequest: o.onPowerRequest } : {}),
    installer: {
      state, log: o.log.child('install'), owner: ENGINE_OWNER, machineConfig: () => config.forDisk(),
      machine: o.installer ?? {
        refuse: o.hostMode ? 'this engine runs on a host (serve): it installs nothing'
          : 'this engine has no installer',
      },
    },
  }));
  /** For the caller of an ApplyConfig, why it may not write a type (its role). */
  const configWriteDenied = (ctx: CallContext) => {
    const caller = callerOf(ctx.session);
    // Maintenance applies any config: that is how a machine gets its CA. (A refused client never gets this far.)
    if (!caller || caller.kind === 'maintenance' || caller.kind === 'plugin') return () => undefined;
    const access = accessOf(caller);
    return (type: string) => {
      try {
        access.write({ type, owner: '', finalizersOnly: false });
        return undefined;
      } catch (e) {
        return (e as Error).message;
      }
    };
  };
  // Renamed types answer to their former names for a release (CHANGELOG.md): built-in ones only, known now.
  const renamed = new Map(served.flatMap((d) => (d.formerTypes ?? []).map((f) => [f, d.type] as const)));
  const currentType = (type: string) => renamed.get(type) ?? type;
  const api = await startApiServer({
    state, log: o.log, native: o.native,
    service: { codecs, admit: admission.admit, admitRemoval: admission.admitRemoval, currentType },
    listen: o.listen, pluginSocket: o.pluginSocket, pluginByPid: (pid) => supervisor.byPid(pid),
    accessOf, tls: certificate.tls, limits: certificate.limits,
    audit: (line, ok) => logs.ring(AUDIT_SOURCE).append(ok ? 'info' : 'warning', line),
    userMethods: new Map([
      ...logServiceMethods(logs), ...upgradeServiceMethods(upgrader), ...extensionServiceMethods(pushes),
      ...machineServiceMethods({
        pluginByPid: (pid) => supervisor.byPid(pid),
        restartPlugin: (name) => {
          if (runsInEngine.has(name)) {
            throw new StateError('failed-precondition', `${name} runs inside the engine (PID 1), not as a process `
              + 'of its own: there is nothing to restart', name);
          }
          return supervisor.restart(name);
        },
        pluginNames: () => o.plugins.map((p) => p.name),
      }),
      ...configServiceMethods(config, configWriteDenied),
    ]),
    onUserWrite: (p) => config.noteUserWrite(p),
  });
  certificate.serve(api);
  // Each plugin's outputs come from its controllers, made once here.
  const builtins = o.plugins.map(builtinPlugin);
  if (o.startPlugins !== false) {
    // On a host nothing configures the network by itself: all at once there (and nothing of the host is probed).
    const configFrom = new Map(looks.flatMap((l) => (l.look.comes ? [[l.name, l.look.comes] as const] : [])));
    // What makes the machine reachable, and a plugin whose look says it has more to publish or a config to find.
    const foremost = new Set([...o.plugins.filter((p) => p.startFirst).map((p) => p.name),
      ...looks.filter((l) => l.look.startFirst).map((l) => l.name), ...configFrom.keys()]);
    const first = new Set([...foremost, ...(o.hostMode ? o.plugins.map((p) => p.name) : []), ...configPlugins]);
    // One read here settles sooner than the network: waited for alone when any is (plugin-waves.ts). A config read
    // above and not applied yet is one on its way here.
    const comes = [...configFrom.values(), ...(readHereSettled ? [] : ['here' as const])];
    const processes = builtins.filter((b) => !runsInEngine.has(b.name));
    waves = startInWaves({
      first: processes.filter((b) => first.has(b.name)), rest: processes.filter((b) => !first.has(b.name)),
      // What makes the machine reachable first, the others in the background until it is (below).
      start: (ps) => {
        supervisor.start(ps.filter((p) => foremost.has(p.name)));
        supervisor.start(ps.filter((p) => !foremost.has(p.name)), o.hostMode ? {} : { nice: BACKGROUND_NICE });
      },
      wait: (ps) => supervisor.wait(ps), log: o.log,
      ...(comes.length ? { configOnItsWay: comes.includes('here') ? 'here' as const : 'network' as const } : {}),
    });
    // Without either milestone (a plugin that cannot start, no lease) the background ends all the same.
    setTimeout(() => supervisor.foreground(), SECOND_WAVE_CAP_MS).unref();
  }
  // Builds pushed with --persist at an earlier boot run again, before the controller starts their extensions.
  if (!('refuse' in extensionMachine)) {
    // Beside the kept images (/var).
    const pushedFile = join(extensionMachine.imagesDir, 'pushed.json');
    for (const [name, spec] of readPersistedOverrides(pushedFile, extensionMachine.imagesDir, o.log)) {
      await upsert(state, { namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE, id: name }, spec, '');
    }
    controllers.register(extensionOverrideKeep(pushedFile));
  }
  // Once the plugin socket listens: an extension's process connects to it as it starts.
  controllers.register(extensionSpec({
    state, log: o.log.child('extensions'), supervisor, admission, pluginSocket: o.pluginSocket,
    builtins: pluginWriters(o.plugins),
    machine: extensionMachine, types: extensionTypes,
  }));
  await controllers.watching();
  const graceSeconds = integerParam(o.cmdline.params, SHUTDOWN_GRACE_PARAM,
    { min: 0, max: 3600, fallback: DEFAULT_SHUTDOWN_GRACE_MS / 1000, unit: 'seconds' }, o.log);
  const shutdownHold = await startShutdownHold({
    state, owner: ENGINE_OWNER, log: o.log.child('shutdown'), graceMs: graceSeconds * 1000,
  });
  /** What the open watches end with when the machine stops: the shutdown's action and reason. */
  let stopping: string | undefined;
  return {
    state, api, config,
    prepareShutdown: (action, reason, hold) => {
      stopping = `the machine is ${STOPPING_WORDS[action]}: ${reason}`;
      return shutdownHold.prepare(action, reason, hold);
    },
    async setBootStatus(s) {
      await upsert(state, { namespace: RUNTIME_NS, type: BOOT_STATUS_TYPE, id: 'boot' }, s, ENGINE_OWNER);
    },
    async stop() {
      waves?.cancel(); // nothing starts while the machine stops
      // The config first: a change it is making may wait for a controller's finalizer (an extension stopping).
      await config.stop();
      await controllers.stop();
      for (const r of inEngineRuntimes) await r.runtime.stop();
      upgrader.close();
      trial?.close();
      await supervisor.stop();
      await api.stop(stopping);
    },
  };
}

