// feed: what the dashboard shows, kept current from the machine. Resources come from watches
// (each type's whole kind, so a change shows as it happens), the machine's figures from
// MachineService's Overview every 2 s (they are /proc readings, not resources), and log lines
// from LogService, one stream per source (the kernel's left out: the engine's and plugins' lines
// say what the machine does).
import type {
  ExtensionStatusSpec, HealthStatusSpec, HostnameSpecStatusSpec, LinkStatusSpec, MachineStatusSpec,
  MountSpecStatusSpec, PluginStatusSpec, TimeStatusSpec, UpdateStatusSpec, VersionSpec,
} from '../../proto/gen/spec-types.ts';
import type { Watch, WatchEvent } from '../../cosi/state/state.ts';
import { LOG_RPC, MACHINE_RPC, callUnary } from '../../machinery/model/service-wire.ts';
import type { LogLine } from '../../proto/gen/spec-types.ts';
import { EXIT, exitCodeOf } from '../errors.ts';
import type { Session } from '../session.ts';
import type { DashboardData } from './view.ts';
import {
  EXTENSION_STATUS_TYPE, HEALTH_STATUS_TYPE, HOSTNAME_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, MACHINE_STATUS_TYPE,
  MOUNT_SPEC_STATUS_TYPE, PLUGIN_STATUS_TYPE, TIME_STATUS_TYPE, UPDATE_STATUS_TYPE, VERSION_TYPE,
} from '../../proto/gen/resource-types.ts';

const OVERVIEW_EVERY_MS = 2000;
/** Log lines kept for the pane: more than any terminal has rows. */
const LOG_LINES_KEPT = 500;

export interface FeedOptions {
  /** Keep watching and following (the live dashboard), or read once (--once). */
  follow: boolean;
  /** Lines of each source's past to start the logs pane with. */
  logTail: number;
  /** Something shown changed. */
  changed(): void;
}

/** Where each watched type lands, and the name its problems go under (view.ts shows each). */
interface Mirror { type: string; section: string; into: Map<string, unknown> }

export class DashboardFeed {
  private readonly versions = new Map<string, VersionSpec>();
  private readonly plugins = new Map<string, PluginStatusSpec>();
  private readonly extensions = new Map<string, ExtensionStatusSpec>();
  private readonly links = new Map<string, LinkStatusSpec>();
  private readonly mounts = new Map<string, MountSpecStatusSpec>();
  private readonly times = new Map<string, TimeStatusSpec>();
  private readonly updates = new Map<string, UpdateStatusSpec>();
  private readonly healths = new Map<string, HealthStatusSpec>();
  private readonly machines = new Map<string, MachineStatusSpec>();
  private readonly hostnames = new Map<string, HostnameSpecStatusSpec>();
  private readonly logs: LogLine[] = [];
  private readonly problems = new Map<string, string>();
  /** The first call that failed (not a type the machine lacks): --once's exit code. */
  private failure: Error | undefined;
  private overview: DashboardData['overview'];
  private lost: string | undefined;
  private readonly closers: (() => void)[] = [];
  private closed = false;
  /** Resolves with why when the machine stops answering a watch. */
  readonly gone: Promise<string>;
  private goneWith: (why: string) => void = () => undefined;

  constructor(private readonly s: Session, private readonly o: FeedOptions) {
    this.gone = new Promise((r) => {
      this.goneWith = r;
    });
  }

  /** Resolves once every section has its first contents (or says why it has none). */
  async start(): Promise<void> {
    const mirrors: Mirror[] = [
      { type: VERSION_TYPE, section: 'version', into: this.versions },
      { type: PLUGIN_STATUS_TYPE, section: 'plugins', into: this.plugins },
      { type: EXTENSION_STATUS_TYPE, section: 'extensions', into: this.extensions },
      { type: HEALTH_STATUS_TYPE, section: 'health', into: this.healths },
      { type: MACHINE_STATUS_TYPE, section: 'stopping', into: this.machines },
      { type: LINK_STATUS_TYPE, section: 'links', into: this.links },
      { type: HOSTNAME_SPEC_STATUS_TYPE, section: 'hostname', into: this.hostnames },
      { type: TIME_STATUS_TYPE, section: 'time', into: this.times },
      { type: MOUNT_SPEC_STATUS_TYPE, section: 'mounts', into: this.mounts },
      { type: UPDATE_STATUS_TYPE, section: 'updates', into: this.updates },
    ];
    await Promise.all([...mirrors.map((m) => this.mirror(m)), this.readOverview(), this.readLogs()]);
    if (this.o.follow && !this.closed) {
      const timer = setInterval(() => {
        void this.readOverview().then(() => this.changed());
      }, OVERVIEW_EVERY_MS);
      this.closers.push(() => clearInterval(timer));
    }
  }

  data(now = new Date()): DashboardData {
    return {
      endpoint: this.s.ctx.endpoint, now, versions: this.versions, plugins: this.plugins, links: this.links,
      extensions: this.extensions,
      mounts: this.mounts, logs: this.logs, problems: this.problems,
      ...(this.overview ? { overview: this.overview } : {}),
      ...(first(this.hostnames) ? { hostname: first(this.hostnames)!.hostname } : {}),
      ...(first(this.machines) ? { machine: first(this.machines)! } : {}),
      ...(first(this.healths) ? { health: first(this.healths)! } : {}),
      ...(first(this.times) ? { time: first(this.times)! } : {}),
      ...(first(this.updates) ? { update: first(this.updates)! } : {}),
      ...(this.lost ? { lost: this.lost } : {}),
    };
  }

  /** The first call that failed, if one did. */
  get failed(): Error | undefined { return this.failure; }

  close(): void {
    this.closed = true;
    for (const c of this.closers.splice(0)) c();
  }

  /** Streams being cancelled may still deliver: nobody hears of it after close(). */
  private changed(): void { if (!this.closed) this.o.changed(); }

  private machineGone(why: string): void {
    if (this.closed || this.lost) return;
    this.lost = why;
    this.goneWith(why);
    this.changed();
  }

  private fail(section: string, e: Error, what = ''): void {
    this.failure ??= e;
    this.problems.set(section, `${what}${e.message}`);
    this.changed();
  }

  /** A whole kind into `into`; its section names the problem when the machine does not serve the type. */
  private async mirror(m: Mirror): Promise<void> {
    let def;
    try {
      def = await this.s.resolve(m.type);
    } catch (e) {
      // A machine without the plugin that defines the type: said, not a failure.
      if (exitCodeOf(e) === EXIT.notFound) this.problems.set(m.section, (e as Error).message);
      else this.fail(m.section, e as Error);
      return;
    }
    let bootstrapped: () => void = () => undefined;
    const ready = new Promise<void>((r) => {
      bootstrapped = r;
    });
    let watch: Watch;
    try {
      watch = await this.s.state.watch({ namespace: this.s.defaultNamespaceOf(def), type: def.type },
        { bootstrapContents: true }, (events: readonly WatchEvent[]) => {
          for (const e of events) {
            if (e.type === 'bootstrapped') bootstrapped();
            else if (e.type === 'destroyed') m.into.delete(e.resource.metadata.id);
            else if (e.type === 'created' || e.type === 'updated') m.into.set(e.resource.metadata.id, e.resource.spec);
          }
          this.changed();
        }, true); // with bootstrapped: the resources there already have all come
    } catch (e) {
      this.fail(m.section, e as Error, `${def.displayType}: `);
      return;
    }
    if (this.closed) {
      watch.close();
      return;
    } // the user quit while it started
    if (!this.o.follow) {
      const ended = await Promise.race([ready.then(() => undefined), watch.done]);
      watch.close();
      if (ended) this.fail(m.section, ended, `${def.displayType}: `);
      return;
    }
    // Only the machine ends a watch of the live dashboard (close() is at the end): it went away.
    void watch.done.then((e) => {
      if (!this.closed) this.machineGone(e?.message ?? 'the watch ended');
    });
    this.closers.push(() => watch.close());
    await Promise.race([ready, watch.done]);
  }

  private async readOverview(): Promise<void> {
    try {
      this.overview = await callUnary(this.s.state, MACHINE_RPC.overview, {});
      this.problems.delete('machine');
    } catch (e) {
      this.fail('machine', e as Error, 'cannot read the machine\'s figures: ');
    }
  }

  private async readLogs(): Promise<void> {
    let names: string[];
    try {
      const r = await callUnary(this.s.state, LOG_RPC.logSources, {});
      names = (r.sources ?? []).map((x) => x.name).filter((n) => n !== 'kernel');
    } catch (e) {
      this.fail('logs', e as Error);
      return;
    }
    if (this.closed) return;
    await Promise.all(names.map(async (source) => {
      const request = LOG_RPC.logs.request.encode({
        source, follow: this.o.follow, tail: this.o.logTail, previous: false,
      });
      const call = this.s.state.stream(LOG_RPC.logs.path, request, (m) => {
        this.addLine(LOG_RPC.logs.response.decode(m));
        this.changed();
      }, this.o.follow ? undefined : this.s.longCallMs);
      this.closers.push(() => call.cancel());
      const ended = call.done.then((e) => {
        if (e && !this.closed) this.fail('logs', e, `${source}: `);
      });
      if (!this.o.follow) await ended;
    }));
  }

  /** Lines of several sources arrive interleaved: each goes where its time puts it. */
  private addLine(l: LogLine): void {
    let i = this.logs.length;
    while (i > 0 && (this.logs[i - 1]!.time ?? '') > (l.time ?? '')) i--;
    this.logs.splice(i, 0, l);
    if (this.logs.length > LOG_LINES_KEPT) this.logs.splice(0, this.logs.length - LOG_LINES_KEPT);
  }
}

const first = <T>(m: ReadonlyMap<string, T>): T | undefined => m.values().next().value;
