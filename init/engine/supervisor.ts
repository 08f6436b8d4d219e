// supervisor: runs each plugin as a child process of this same executable (a built-in
// plugin, or an extension's launcher that becomes the extension's program), restarts it
// with backoff when it dies (without touching the others), and publishes its status as a
// PluginStatus resource. Plugins are known by pid: the plugin socket admits a connection
// only from a pid the supervisor started.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { StateError } from '../../cosi/state/errors.ts';
import { destroyIfPresent, upsert } from '../../cosi/state/upsert.ts';
import type { MemoryState } from '../../cosi/state/memory-state.ts';
import type { Logger } from '../../machinery/log.ts';
import {
  parsePluginLine, parsePluginStats, PLUGIN_READY_LINE, pluginOutputs, type ControllerStats, type Plugin,
} from '../../machinery/model/plugin.ts';
import { type PluginStatusSpec } from '../../machinery/model/runtime-types.ts';
import { DEFAULT_BACKOFF } from '../../cosi/controller/runtime.ts';
import { OneAtATime } from '../../machinery/one-at-a-time.ts';
import { readyWords, type ReadyCheck } from '../../machinery/model/extension-manifest.ts';
import { probeOnce } from './ready-probe.ts';
import { killReason, oomKills } from '../../machinery/sys/oom-kills.ts';
import { reniceProcess } from '../../machinery/sys/nice.ts';
import { PLUGIN_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

export const ENGINE_OWNER = 'engine';

/** A plugin's output goes to the engine's log under this prefix (the log book keeps it as the plugin's). */
const PLUGIN_LOG_PREFIX = 'plugin/';
export const pluginOfLogPrefix = (prefix: string): string | undefined =>
  prefix.startsWith(PLUGIN_LOG_PREFIX) ? prefix.slice(PLUGIN_LOG_PREFIX.length).split('/')[0] : undefined;

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/**
 * SIGTERM, then SIGKILL after `timeoutMs`; resolves once the process is gone (or, `waitAfterKill` false, at the
 * SIGKILL). One that ended already resolves at once.
 */
function terminate(c: ChildProcess, timeoutMs: number, o: { waitAfterKill?: boolean } = {}): Promise<void> {
  if (!running(c)) return Promise.resolve();
  return new Promise((res) => {
    c.once('exit', () => res());
    setTimeout(() => {
      c.kill('SIGKILL');
      if (o.waitAfterKill === false) res();
    }, timeoutMs).unref();
    c.kill('SIGTERM');
  });
}

/** What the supervisor runs: a built-in plugin or an extension. */
export interface SupervisedPlugin {
  readonly name: string;
  /** The types its connection to the plugin socket may write. */
  readonly outputs: readonly string[];
  /** The only owner its writes may carry (an extension's: its name); undefined: its controllers' names. */
  readonly owner?: string;
  /** The arguments to this executable that start it. */
  readonly args: readonly string[];
  /** Added to its environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** It needs none of the machine's mount operations (see SpawnPlugin). */
  readonly ownMounts: boolean;
  /** When it counts as running; undefined: a COSI plugin's ready line. */
  readonly ready?: ReadyCheck;
}

export const builtinPlugin = (p: Plugin): SupervisedPlugin =>
  ({ name: p.name, outputs: pluginOutputs(p), args: ['plugin', p.name], ownMounts: !p.hostMounts });

/**
 * Starts `<exe> ARGS` with the given environment; `ownMounts`: the plugin needs none of
 * the machine's mount operations, so it may be born in a mount namespace of its own; `nice`: born at that CPU
 * priority (machinery/sys/nice.ts), where the spawner can set it back.
 */
export type SpawnPlugin = (args: string[], env: NodeJS.ProcessEnv, o: { ownMounts: boolean; nice?: number }) =>
  ChildProcess;

/** `serve --fast-backoff`: restarts quick enough for a test to see several, capped low. */
export const FAST_BACKOFF = { initialMs: 100, factor: 1.5, maxMs: 5000 };

export interface SupervisorOptions {
  state: MemoryState;
  /** The wait between two tries of a program's readiness probe (default 250 ms). */
  probeIntervalMs?: number;
  log: Logger;
  spawn: SpawnPlugin;
  socketPath: string;
  backoff?: { initialMs: number; factor: number; maxMs: number };
  /** A plugin's process is being started (again): its log begins a new run (`cosictl logs --previous`). */
  onRunStart?: (name: string) => void;
  /**
   * A plugin's start ended: it runs (`ok`: its ready line, or its probe passed), or it could not be forked or ended
   * before it ran (it may be started again after its backoff).
   */
  onStartEnded?: (name: string, ok: boolean) => void;
}

interface Running {
  plugin: SupervisedPlugin;
  /** The last line it wrote at error level, and the last on its standard error (why it died, when it did). */
  lastError?: string; lastStderr?: string;
  /** Removed: its exit is the end. */
  removed?: boolean; child?: ChildProcess; status: PluginStatusSpec; delay: number; timer?: NodeJS.Timeout;
  /** Its process was stopped to restart it: the exit starts it again at once. */
  restarting?: boolean;
  /** Its controllers' figures, as it last printed them. */
  stats?: ControllerStats[];
  /** Started in the background (`start`'s nice) until `foreground`. */
  nice?: number;
}

export class PluginSupervisor {
  private readonly plugins = new Map<string, Running>();
  /**
   * Each plugin's status writes, one after another: two upserts in flight at once (its 'waiting', then
   * 'starting' a moment later) could land in either order, or one fail on the other's version.
   */
  private readonly writes = new OneAtATime();
  /** Named by `wait`, not started yet. */
  private readonly waiting = new Set<string>();
  private stopping = false;
  /** `foreground` was called: every plugin runs at the normal priority. */
  private foregrounded = false;

  constructor(private readonly o: SupervisorOptions) {}

  /** The plugin a process id belongs to, if the supervisor started it and it still runs. */
  byPid(pid: number): SupervisedPlugin | undefined {
    for (const r of this.plugins.values()) {
      if (r.child?.pid === pid && running(r.child)) return r.plugin;
    }
    return undefined;
  }

  /** Each plugin's controllers' figures, as last printed. */
  controllerStats(): { plugin: string; controllers: ControllerStats[] }[] {
    return [...this.plugins.values()].map((r) => ({ plugin: r.plugin.name, controllers: r.stats ?? [] }));
  }

  /**
   * Starts each; one that cannot be started (a fork refused for memory) is logged and the others still start.
   * `nice`: each runs at that CPU priority (and starts again at it) until `foreground` (none after it).
   */
  start(plugins: readonly SupervisedPlugin[], o: { nice?: number } = {}): void {
    for (const p of plugins) {
      try {
        this.add(p, this.foregrounded ? undefined : o.nice);
      } catch (e) {
        this.o.log.child(`${PLUGIN_LOG_PREFIX}${p.name}`).error(`cannot start: ${(e as Error).message}`);
      }
    }
  }

  /**
   * Says that these will start later (the second wave): each has a PluginStatus `waiting` until `start`,
   * so that `get plugins` and health name them rather than leave them out.
   */
  wait(plugins: readonly SupervisedPlugin[]): void {
    for (const p of plugins) {
      if (this.plugins.has(p.name)) continue;
      this.waiting.add(p.name);
      this.publishStatus(p.name, { state: 'waiting', pid: 0, restarts: 0, outputs: [...p.outputs] });
    }
  }

  /** Those started with a nice value run at the normal priority from now on (each thread of each process). */
  foreground(): void {
    this.foregrounded = true;
    for (const r of this.plugins.values()) {
      if (r.nice === undefined) continue;
      r.nice = undefined;
      const pid = r.child?.pid;
      if (pid === undefined || !running(r.child!)) continue;
      try {
        reniceProcess(pid, 0);
      } catch (e) {
        const log = this.o.log.child(`${PLUGIN_LOG_PREFIX}${r.plugin.name}`);
        log.warn(`cannot set its priority back: ${(e as Error).message}`);
      }
    }
  }

  /** Starts one more (an extension). Throws when one of that name runs already. */
  add(p: SupervisedPlugin, nice?: number): void {
    if (this.plugins.has(p.name)) throw new Error(`a plugin named ${p.name} runs already`);
    this.waiting.delete(p.name);
    if (this.stopping) throw new Error('the machine is stopping: no plugin starts');
    const r: Running = {
      plugin: p, status: { state: 'starting', pid: 0, restarts: 0, outputs: [...p.outputs] },
      delay: (this.o.backoff ?? DEFAULT_BACKOFF).initialMs, ...(nice === undefined ? {} : { nice }),
    };
    this.plugins.set(p.name, r);
    this.launch(r);
  }

  /**
   * Stops one for good (SIGTERM, SIGKILL after `timeoutMs`) and forgets it, its PluginStatus destroyed:
   * an extension removed or replaced. Resolves once its process is gone.
   */
  async remove(name: string, timeoutMs = 5000): Promise<void> {
    const r = this.plugins.get(name);
    if (!r) return;
    r.removed = true;
    clearTimeout(r.timer);
    if (r.child) await terminate(r.child, timeoutMs);
    this.plugins.delete(name);
    await this.writes.run(name, () =>
      destroyIfPresent(this.o.state, { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: name }, ENGINE_OWNER));
  }

  /**
   * Stops a plugin's process (SIGTERM, SIGKILL after `timeoutMs`) and starts it again at once, its
   * backoff started over; one waiting to restart after a crash starts now. undefined: no such plugin.
   */
  async restart(name: string, timeoutMs = 5000): Promise<{ oldPid: number } | undefined> {
    const r = this.plugins.get(name);
    if (this.stopping && (r || this.waiting.has(name))) {
      throw new StateError('failed-precondition', `the machine is stopping: ${name} is not restarted`, name);
    }
    if (!r && this.waiting.has(name)) {
      throw new StateError('failed-precondition', `${name} has not started yet: it starts with the second wave `
        + '(once the plugins started before it run and a config that may come is settled, or when the machine config '
        + 'needs it)', name);
    }
    if (!r) return undefined;
    clearTimeout(r.timer);
    r.delay = (this.o.backoff ?? DEFAULT_BACKOFF).initialMs;
    const c = r.child;
    if (!c || !running(c)) {
      r.status.restarts++;
      this.launch(r);
      return { oldPid: 0 };
    }
    r.restarting = true;
    await terminate(c, timeoutMs);
    return { oldPid: c.pid ?? 0 };
  }

  async stop(timeoutMs = 5000): Promise<void> {
    this.stopping = true;
    // Those still waiting never start now: their status says so.
    for (const name of this.waiting) this.publishStatus(name, { state: 'stopped', pid: 0, restarts: 0 });
    this.waiting.clear();
    const waits: Promise<unknown>[] = [];
    for (const r of this.plugins.values()) {
      clearTimeout(r.timer);
      // The machine goes down whatever a plugin does: not waited for past its SIGKILL.
      if (r.child) waits.push(terminate(r.child, timeoutMs, { waitAfterKill: false }));
    }
    await Promise.all(waits);
  }

  private async publish(r: Running): Promise<void> {
    const id = { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: r.plugin.name };
    const status = structuredClone(r.status);
    await this.writes.run(r.plugin.name, () => upsert(this.o.state, id, status, ENGINE_OWNER));
  }

  /** The status of a plugin without a process (waiting, or never started); a failure is logged. */
  private publishStatus(name: string, status: PluginStatusSpec): void {
    const id = { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: name };
    void this.writes.run(name, () => upsert(this.o.state, id, status, ENGINE_OWNER)).catch((e: Error) =>
      this.o.log.child(`${PLUGIN_LOG_PREFIX}${name}`).error(`publishing status: ${e.message}`));
  }

  /** Running now, if `child` is still the one starting. */
  private becameReady(r: Running, child: ChildProcess, log: Logger): void {
    if (r.child !== child || r.status.state !== 'starting') return;
    r.status = { ...r.status, state: 'running' };
    delete r.status.lastError;
    void this.publish(r).catch((e) => log.error(`publishing status: ${(e as Error).message}`));
    this.o.onStartEnded?.(r.plugin.name, true);
  }

  /** Tries the probe until it passes or this process is no longer the one starting; each new reason is logged. */
  private async probeUntilReady(r: Running, child: ChildProcess, check: ReadyCheck, log: Logger): Promise<void> {
    const interval = this.o.probeIntervalMs ?? 250;
    let said = '';
    while (r.child === child && running(child) && r.status.state === 'starting') {
      const result = await probeOnce(check);
      if (result === true) {
        log.info(`ready: ${readyWords(check)} answered`);
        this.becameReady(r, child, log);
        return;
      }
      if (result !== said) log.info(`not ready yet (${result}); trying every ${interval}ms`);
      said = result;
      await new Promise((res) => setTimeout(res, interval).unref());
    }
  }

  private launch(r: Running): void {
    const log = this.o.log.child(`${PLUGIN_LOG_PREFIX}${r.plugin.name}`);
    const started = Date.now();
    const killsAtStart = oomKills();
    let child: ChildProcess;
    this.o.onRunStart?.(r.plugin.name);
    try {
      child = this.o.spawn(
        [...r.plugin.args], { ...process.env, ...r.plugin.env, COSI_PLUGIN_SOCKET: this.o.socketPath },
        { ownMounts: r.plugin.ownMounts, ...(r.nice === undefined ? {} : { nice: r.nice }) },
      );
    } catch (e) {
      // No process (a fork refused for memory): the status says so rather than what it was before.
      r.status = { ...r.status, state: 'stopped', pid: 0, lastError: `cannot start: ${(e as Error).message}` };
      void this.publish(r).catch((pe: Error) => log.error(`publishing status: ${pe.message}`));
      this.o.onStartEnded?.(r.plugin.name, false);
      throw e;
    }
    r.lastError = undefined;
    r.lastStderr = undefined;
    r.child = child;
    // Running once it says so (PLUGIN_READY_LINE): a process that dies while it starts never looked healthy.
    r.status = { ...r.status, state: 'starting', pid: child.pid ?? 0 }; // backoffMs stays: the wait before this start
    void this.publish(r).catch((e) => log.error(`publishing status: ${(e as Error).message}`));
    /** Each stream's lines read to its end: a process's last words may come after its exit. */
    const drained: Promise<void>[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      const lines = createInterface({ input: stream });
      drained.push(new Promise((res) => lines.once('close', () => res())));
      lines.on('line', (l) => {
        const stats = stream === child.stdout ? parsePluginStats(l) : undefined;
        if (stats) {
          r.stats = stats;
          return;
        }
        if (stream !== child.stdout || l !== PLUGIN_READY_LINE) {
          const { level, text } = parsePluginLine(l);
          if (level === 'error') r.lastError = text;
          if (stream === child.stderr && text.trim()) r.lastStderr = text;
          if (level === 'error') log.error(text);
          else if (level === 'warning') log.warn(text);
          else log.info(text);
          return;
        }
        if ((r.plugin.ready ?? { kind: 'plugin' }).kind === 'plugin') this.becameReady(r, child, log);
      });
    }
    const ready = r.plugin.ready ?? { kind: 'plugin' };
    if (ready.kind === 'started') child.once('spawn', () => this.becameReady(r, child, log));
    if (ready.kind === 'tcp' || ready.kind === 'http') void this.probeUntilReady(r, child, ready, log);
    child.on('error', (e) => {
      log.error(`cannot start: ${e.message}`);
      // No process came of it (an executable not found): no exit follows, its start ended here.
      if (child.pid !== undefined || r.child !== child || this.stopping) return;
      r.status = { ...r.status, state: 'stopped', pid: 0, lastError: `cannot start: ${e.message}` };
      void this.publish(r).catch((pe: Error) => log.error(`publishing status: ${pe.message}`));
      this.o.onStartEnded?.(r.plugin.name, false);
    });
    child.on('exit', (code, signal) => void (async () => {
      // Its pipes may outlive it (a child of its own holds them): waited for a moment, not for ever.
      await Promise.race([Promise.all(drained), new Promise((res) => setTimeout(res, 500).unref())]);
      const lastExit = {
        ...(code !== null ? { code } : {}), ...(signal !== null ? { signal } : {}), at: new Date().toISOString(),
      };
      const wasRunning = r.status.state === 'running';
      r.status = { ...r.status, state: this.stopping ? 'stopped' : 'backoff', pid: 0, lastExit };
      // Why it died: what it last said was an error, or, dying as it started, its last word on stderr.
      const why = r.lastError ?? (wasRunning ? undefined : r.lastStderr);
      if (why) r.status.lastError = why;
      else delete r.status.lastError;
      if (!wasRunning && !this.stopping) this.o.onStartEnded?.(r.plugin.name, false);
      if (r.removed) return;
      if (this.stopping) {
        void this.publish(r).catch((e) => log.warn(`publishing the stopped status: ${(e as Error).message}`));
        return;
      }
      if (r.restarting) {
        r.restarting = false;
        log.info(`exited (${signal ? `signal ${signal}` : `code ${code}`}) to restart, as asked; starting it again`);
        r.status.restarts++;
        this.launch(r);
        return;
      }
      const backoff = this.o.backoff ?? DEFAULT_BACKOFF;
      // A plugin that ran longer than the longest wait was healthy: start the backoff over.
      if (Date.now() - started > backoff.maxMs) r.delay = backoff.initialMs;
      r.status.backoffMs = Math.round(r.delay);
      const killedBy = killReason(signal, killsAtStart, oomKills());
      log.warn(`exited (${signal ? `signal ${signal}${killedBy}` : `code ${code}`}); `
        + `restart ${r.status.restarts + 1} in ${r.status.backoffMs}ms`);
      void this.publish(r).catch((e) => log.error(`publishing status: ${(e as Error).message}`));
      r.timer = setTimeout(() => {
        r.status.restarts++;
        this.launch(r);
      }, r.delay);
      r.delay = Math.min(r.delay * backoff.factor, backoff.maxMs);
    })());
  }
}
