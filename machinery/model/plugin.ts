// plugin: what a plugin is. A name, the types it defines, and its controllers. The
// engine derives the types a plugin may write from its controllers' outputs. The
// engine is handed its plugins (init/boot, init/commands); it never imports plugins/.
import type { LogLevel, UserDataSpec } from '../../proto/gen/spec-types.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import type { ControllerStatus } from '../../cosi/controller/runtime.ts';
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { ENGINE_TYPES } from './runtime-types.ts';
import type { CapabilityName } from '../../native/index.ts';
import type { SyscallName } from '../sys/seccomp.ts';

/** Where a config that may come for a machine comes from (ConfigLook). */
export type ConfigComes = 'here' | 'network';

/** What a plugin's first look finds of a machine config (Plugin.lookForConfig). */
export interface ConfigLook {
  /**
   * The user data its first pass would publish, read without the network (a fw_cfg file, the command line, a seed
   * volume) and with no source that needs the network ahead of it: PID 1 takes it at once, as it takes a config
   * saved on STATE, and the plugin's own pass later finds the same (no news).
   */
  userData?: UserDataSpec;
  /**
   * The source gave more than the user data, which the plugin publishes itself when it runs (a seed's network
   * config, the machine's name): the plugin starts with the first wave, in the foreground, all the same.
   */
  startFirst?: boolean;
  /** None read here, but one may still come: from a source here that did not answer yet, or over the network. */
  comes?: ConfigComes;
  /** Why none was read when one here did not answer (for PID 1's log). */
  why?: string;
}

export interface Plugin {
  readonly name: string;
  readonly description: string;
  /** Namespaces this plugin introduces, with descriptions (registered by the engine). */
  namespaces?(): Record<string, string>;
  /** Resource types this plugin introduces (registered by the engine before it starts). */
  types(): DefinitionInput[];
  controllers(): Controller[];
  /**
   * Its controllers that only transform state (the merges of its layers: no system call, nothing of the kernel's):
   * they run on PID 1's engine, beside the process that runs `controllers()` (the process rule: only what touches
   * the kernel needs the process). A merged spec is then in the engine's state as soon as its layers are, and the
   * process neither watches the layers nor writes what it merges.
   */
  engineControllers?(): Controller[];
  /** The only capabilities the plugin process keeps (no_new_privs is always set). */
  readonly capabilities: readonly CapabilityName[];
  /**
   * The dangerous syscalls (machinery/sys/seccomp.ts) its job needs; its seccomp filter refuses the
   * others with EPERM, whatever its capabilities would allow. Default: none.
   */
  readonly syscalls?: readonly SyscallName[];
  /**
   * true: it works on the machine's own mounts (mounts what others use). Otherwise it runs in a mount
   * namespace of its own, which sees the machine's mounts but whose own mounts nobody else sees.
   */
  readonly hostMounts?: boolean;
  /** Off unless the engine runs with test plugins enabled. */
  readonly testOnly?: boolean;
  /**
   * Started before the others on a machine (init/engine/plugin-waves.ts): what makes it reachable. The others start
   * once these run (and a config that may come is settled: `lookForConfig`).
   */
  readonly startFirst?: boolean;
  /**
   * A config for this machine from this plugin (the platform plugin: the command line, a fw_cfg file, a seed volume,
   * a cloud's metadata service), as far as a look without the network finds: one read (PID 1 applies it before any
   * plugin starts, so those acting on it start with the first wave), or where one may still come from: `here` (a
   * source here that did not answer, or one over the network ahead of those here) or `network` (fetched once it is
   * up); neither: none. Asked once by PID 1 with the kernel's parameters; a look that fails or takes over 2 s counts
   * as `here`. When one may come the plugin starts first too, and the others wait for that config to be settled
   * (applied, kept, refused: its own plugins start first), or, for one from the network, for the network milestone.
   */
  readonly lookForConfig?: (machine: { params: Readonly<Record<string, string>> }) => Promise<ConfigLook>;
  /**
   * true: its controllers only transform state (no system call of their own, nothing of the kernel's), so they
   * run on the engine's controller runtime in PID 1 rather than in a process of their own: a Node process costs
   * 15 MiB (ARCHITECTURE.md, "Which Node"). A plugin that touches the kernel keeps its own process, with only its
   * own capabilities and seccomp filter. Its status says it runs in PID 1; there is nothing to restart.
   */
  readonly inEngine?: boolean;
}

/**
 * The line a plugin process writes to its standard output once its controllers run (as systemd's
 * READY=1): until then its PluginStatus says starting. Any process can say it, in any language.
 */
export const PLUGIN_READY_LINE = 'COSI-PLUGIN-READY';

/**
 * A line a plugin prints on its standard output now and then: its controllers' figures as JSON (the
 * engine's metrics endpoint shows the latest). Any language can print it; `buckets` are cumulative
 * counts of reconciles at or under each bound (seconds).
 */
export const PLUGIN_STATS_PREFIX = 'COSI-PLUGIN-STATS ';
export interface ControllerStats {
  name: string; reconciles: number; seconds: number; errors: number; buckets: [le: number, count: number][];
}
/** A controller runtime's figures as a plugin reports them (its stats line, the engine's metrics). */
export const controllerStats = (statuses: readonly ControllerStatus[]): ControllerStats[] => statuses.map((s) => ({
  name: s.name, reconciles: s.reconciles.count, seconds: s.reconciles.sum, errors: s.restarts,
  buckets: s.reconciles.bounds.map((b, i): [number, number] => [b, s.reconciles.counts[i]!]),
}));
export const pluginStatsLine = (controllers: ControllerStats[]) =>
  `${PLUGIN_STATS_PREFIX}${JSON.stringify({ controllers })}`;

/** The figures of a stats line, or undefined when it is not one (or not readable: a plugin's bug, ignored). */
export function parsePluginStats(line: string): ControllerStats[] | undefined {
  if (!line.startsWith(PLUGIN_STATS_PREFIX)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line.slice(PLUGIN_STATS_PREFIX.length));
  } catch (e) {
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
  const cs = (v as { controllers?: unknown }).controllers;
  if (!Array.isArray(cs)) return undefined;
  return cs.filter((c): c is ControllerStats => typeof c?.name === 'string' && Number.isFinite(c.reconciles)
    && Number.isFinite(c.seconds) && Number.isFinite(c.errors) && Array.isArray(c.buckets));
}

/** How bad a log line says it is (as LogService sends it). */
export type LineLevel = LogLevel;

const LEVEL_WORDS: readonly [string, LineLevel][] = [['ERROR ', 'error'], ['WARN ', 'warning'], ['DEBUG ', 'debug']];

/**
 * A line of a plugin's output (stdout or stderr), as the engine keeps it: an optional level word
 * (`ERROR `, `WARN `, `DEBUG `) then the text; a line without one is info. Any language can print it.
 */
export function pluginLine(level: LineLevel, text: string): string {
  return `${LEVEL_WORDS.find(([, l]) => l === level)?.[0] ?? ''}${text}`;
}

export function parsePluginLine(line: string): { level: LineLevel; text: string } {
  const w = LEVEL_WORDS.find(([word]) => line.startsWith(word));
  return w ? { level: w[1], text: line.slice(w[0].length) } : { level: 'info', text: line };
}

/** Set (to "1") in a plugin's environment when the engine runs on a host (`serve`)
 * rather than as PID 1: plugins must then never act on the host by themselves. */
export const HOST_MODE_ENV = 'COSI_HOST_MODE';
export const inHostMode = () => process.env[HOST_MODE_ENV] === '1';

/** Every controller of a plugin: its process's and those it runs on the engine. */
export const everyController = (p: Plugin): Controller[] => [...p.controllers(), ...p.engineControllers?.() ?? []];

/**
 * Each plugin with the types any controller of its writes (its process's and its engine's): what no extension may
 * declare as an output of its own.
 */
export const pluginWriters = (plugins: readonly Plugin[]) => plugins.map((p) => ({
  name: p.name, outputs: outputTypes(everyController(p)),
}));

/** The types a plugin's connection may write (its process's controllers' outputs). */
export function pluginOutputs(p: Plugin): string[] {
  return outputTypes(p.controllers());
}

/** The types some of `controllers` write, each once, sorted. */
function outputTypes(controllers: readonly Controller[]): string[] {
  return [...new Set(controllers.flatMap((c) => c.outputs().map((o) => o.type)))].sort();
}

/**
 * Every type a machine with these plugins serves: the engine's and the plugins'. A type
 * some plugin's controller writes exclusively is a status: written by that controller only.
 */
export function servedTypes(plugins: readonly Plugin[]): DefinitionInput[] {
  const exclusive = new Set(plugins.flatMap(everyController)
    .flatMap((c) => c.outputs().filter((x) => x.kind === 'exclusive').map((x) => x.type)));
  return [...ENGINE_TYPES, ...plugins.flatMap((p) => p.types())]
    .map((d) => (d.access || !exclusive.has(d.type) ? d : { ...d, access: 'controllers' as const }));
}
