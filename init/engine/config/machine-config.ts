// machine-config: the machine config is every resource users declare (owner "", not
// ephemeral), persisted as one multi-document YAML. A config is validated as a whole
// (types and namespaces it defines itself included) before anything is written; then
// applied live as a merge (create, update) or a replace (and prune: user resources it
// does not name are deleted), and persisted. A tried config is reverted unless
// confirmed. Resources that controllers, DHCP or the platform write are never touched.
// This class runs one change at a time and keeps the ConfigStatus; it hands planning to
// config-plan.ts, the writes to config-steps.ts and the saves to config-saver.ts.
import { decodeConfigInput } from '../../../machinery/config/config-input.ts';
import { loadDocumentsYielding, type CheckOptions, type ConfigSource } from '../../../machinery/config/documents.ts';
import { ConfigRefused, documentsOfType, validateConfig } from '../../../machinery/config/validate-config.ts';
import { MAX_SAVED_CONFIG_BYTES, type ConfigStore, type SavedConfig } from '../../../machinery/config/saved-config.ts';
import {
  DEFINITION_TYPE, META_NAMESPACE, resourceName, type DefinitionInput, type ResourceDefinitionSpec,
} from '../../../cosi/meta/definition.ts';
import { newResource, type Pointer, type Resource } from '../../../cosi/resource/resource.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import { copyResource } from '../../../cosi/state/freeze.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import type { SpecCodecs } from '../../../cosi/spec/spec-codec.ts';
import type { Logger } from '../../../machinery/log.ts';
import { OneAtATime } from '../../../machinery/one-at-a-time.ts';
import type {
  ConfigChange, ConfigStatusSpec, ExtensionSpec, RegistryCredentialSpec,
} from '../../../machinery/model/runtime-types.ts';
import {
  CONFIG_STATUS_TYPE, EXTENSION_TYPE, REGISTRY_CREDENTIAL_TYPE, RUNTIME_NS,
} from '../../../proto/gen/resource-types.ts';
import { CONFIG_STATUS_ID } from '../../../machinery/model/singleton-ids.ts';
import type { ExtensionTypeBook } from '../extension/types.ts';
import type { Admission } from '../../../machinery/config/admission.ts';
import {
  byRank, changesOf, desiredAsIs, desiredOf, planConfig, type ApplyMode, type Desired, type Step,
} from './config-plan.ts';
import { executeSteps, type ExtensionTypes, type StepsTarget } from './config-steps.ts';
import { ConfigSaver, configText, whereSaved, type Saved } from './config-saver.ts';

export type { ApplyMode } from './config-plan.ts';

export interface ApplyRequest {
  /** Multi-document YAML, plain or gzip. */
  bytes: Uint8Array;
  mode: ApplyMode;
  dryRun?: boolean;
  /** Apply without persisting; revert unless confirmed within this many seconds. */
  trySeconds?: number;
  /** Where the config comes from: api, state, fw_cfg, nocloud, ... */
  source: string;
  /** What the sender calls the input (a file name), for messages. */
  sourceName?: string;
  /** The files the input was joined from, in order (messages name each document's file). */
  files?: readonly { name: string; documents: number }[];
  instanceId?: string;
  /** Input understood but not used (cloud-init keys), with why. */
  ignored?: string[];
  /** What the applied config's status message should say first (a persisted config replaced, and why). */
  note?: string;
  /**
   * Why the sender may not write resources of a type (its role), or undefined when it may. A config
   * naming such a type is refused whole; a replace leaves such types as they are. Default: anything.
   */
  denied?: (type: string) => string | undefined;
}

export interface ApplyResult {
  changes: ConfigChange[];
  persistedTo: string;
  persistProblem: string;
  needsReboot: string[];
  ignored: string[];
  /** RFC 3339, when trying. */
  tryUntil?: string;
}

export interface MachineConfigOptions {
  state: MemoryState;
  log: Logger;
  admission: Admission;
  codecs: SpecCodecs;
  store: ConfigStore;
  /** Owner of the ConfigStatus. */
  owner: string;
  now?: () => Date;
  /** The platform's instance id now (PlatformMetadata), stamped on a config applied without one. */
  currentInstanceId?: () => string;
  /**
   * The types of extensions a config declares (learned from their images, or kept with the saved config),
   * and how they are registered before the config's resources of those types are created.
   */
  extensions?: { book: ExtensionTypeBook; register(name: string, types: readonly DefinitionInput[]): Promise<void> };
  /**
   * Told the types of the config's resources before its status says it is applied or tried (the engine starts the
   * plugins that act on them, and the config milestone waits for those).
   */
  onApplied?: (types: readonly string[]) => void;
}

/** How long a config from the platform (not a user) waits for its extensions' images to be reachable. */
const BOOT_FETCH_PATIENCE_MS = 120_000;

export class MachineConfig {
  private readonly changes = new OneAtATime<'config'>();
  private trying: { snapshot: Desired[]; timer: NodeJS.Timeout; until: Date; source: string; instanceId?: string }
    | undefined;
  private status: ConfigStatusSpec;
  private readonly now: () => Date;
  private readonly saver: ConfigSaver;
  private readonly target: StepsTarget;

  constructor(private readonly o: MachineConfigOptions) {
    this.now = o.now ?? (() => new Date());
    // Where the config will be kept until a save says otherwise.
    this.status = {
      state: 'maintenance', source: '', instanceId: '', resources: 0,
      persistedTo: o.store.path ?? '', persistProblem: o.store.path ? '' : o.store.why,
    } as ConfigStatusSpec;
    this.saver = new ConfigSaver({
      store: o.store, log: o.log, now: this.now, resources: () => this.resources(),
      ...(o.extensions ? { book: o.extensions.book } : {}),
    });
    const ext = o.extensions;
    this.target = {
      state: o.state, admission: o.admission,
      ...(ext ? { register: (name, types) => ext.register(name, types) } : {}),
    };
  }

  private definitionOf(type: string): ResourceDefinitionSpec | undefined {
    return this.o.state.findSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() })
      ?.spec as ResourceDefinitionSpec | undefined;
  }

  /** The resources of the machine config: users' own, of types that are not requests. */
  resources(): Resource[] {
    const kept = this.keptType();
    return this.o.state.resourcesWhere((r) => r.metadata.owner === '' && kept(r.metadata.type))
      .sort((a, b) => byRank(a.metadata, b.metadata));
  }

  /** How many resources the config has: counted per kind, not by walking them (a status is set on every save). */
  private count(): number {
    return this.o.state.countUnowned(this.keptType());
  }

  /** Whether resources of a type belong in the config (not requests: ephemeral types), asked once per type. */
  private keptType(): (type: string) => boolean {
    const kept = new Map<string, boolean>();
    return (type) => {
      let k = kept.get(type);
      if (k === undefined) {
        k = this.definitionOf(type)?.ephemeral !== true;
        kept.set(type, k);
      }
      return k;
    };
  }

  /** The machine config as text: what is persisted, and what `cosictl get machineconfig`-style readers see. */
  text(resources = this.resources()): string {
    return configText(resources);
  }

  /** The config as it would be persisted now, for another disk's STATE (the installer's), and its size. */
  forDisk(): { saved: SavedConfig; resources: number } {
    return this.saver.forDisk(this.status.source || 'api', this.instanceId());
  }

  /** The platform instance the config belongs to: the one it was applied for, else the platform's now. */
  private instanceId(): string | undefined {
    return this.status.instanceId || this.o.currentInstanceId?.() || undefined;
  }

  private nameOf(p: Pointer): string {
    return resourceName(p, this.definitionOf(p.type));
  }

  /** Loaded a document at a time, handing the event loop back between them (a 1 MiB config parses in ~0.7 s). */
  private async parse(
    text: string, source: ConfigSource, maxBytes?: number, patienceMs = 0, check: CheckOptions = {},
  ): Promise<{ want: Desired[]; types: ExtensionTypes; skipped: string[] }> {
    const loaded = await loadDocumentsYielding(text, maxBytes, maxBytes);
    const types: ExtensionTypes = new Map();
    const unknownWhy: string[] = [];
    // A registry's credentials may come in the same config as the extensions pulled from it.
    const credentials = new Map(this.o.extensions ? documentsOfType(loaded, this.o, REGISTRY_CREDENTIAL_TYPE)
      .map((d) => [d.id, d.spec as RegistryCredentialSpec]) : []);
    // The types of the extensions it declares are known before its resources of those types are checked.
    for (const d of this.o.extensions ? documentsOfType(loaded, this.o, EXTENSION_TYPE) : []) {
      const spec = d.spec as ExtensionSpec;
      const learned = await this.o.extensions!.book.learn(d.id, spec, patienceMs, (r) => credentials.get(r));
      if (learned instanceof Error) unknownWhy.push(`extension ${d.id}'s types are unknown: ${learned.message}`);
      else types.set(d.id, learned);
    }
    const coming = { types: [...types.values()].flat(), unknownWhy };
    const { docs, skipped } = validateConfig(loaded, this.o, source, undefined, coming, check);
    return { want: docs.map((d) => desiredOf(d, this.o.codecs)), types, skipped };
  }

  private plan(want: Desired[], mode: ApplyMode, denied?: ApplyRequest['denied']): Step[] {
    return planConfig({
      want, mode, denied, find: (p) => this.o.state.findSync(p), asStored: (r) => this.o.admission.check(r, 'update'),
      // Only a replace prunes: a merge need not list the config.
      configured: mode === 'replace' ? this.resources() : [], nameOf: (p) => this.nameOf(p),
    });
  }

  /** What steps change; `live`: the machine runs, so changes of reboot-only types wait for the next boot. */
  private changesOf(steps: readonly Step[], live: boolean): ConfigChange[] {
    return changesOf(steps, live, (type) => this.definitionOf(type)?.needsReboot === true);
  }

  /** Runs `fn` after every earlier call has finished: one config change at a time. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.changes.run('config', fn);
  }

  apply(req: ApplyRequest): Promise<ApplyResult> {
    return this.serial(async () => {
      const source = req.sourceName || req.source;
      let want: Desired[];
      let types: ExtensionTypes;
      let skipped: string[];
      try {
        if (this.trying && !req.dryRun && !req.trySeconds) {
          throw new StateError('failed-precondition', `a tried config (from ${this.trying.source}) awaits `
            + `confirmation until ${this.trying.until.toISOString()}: confirm it (cosictl apply-config --confirm) `
            + 'or let it revert first');
        }
        const input = decodeConfigInput(req.bytes);
        if (!input.ok) throw new ConfigRefused([`${source}: ${input.message}`], source);
        // A user waits for the answer; a config that comes as the machine boots may wait for its network.
        ({ want, types, skipped } = await this.parse(input.text,
          req.files?.length ? { name: source, files: req.files } : source, undefined,
          req.source === 'api' ? 0 : BOOT_FETCH_PATIENCE_MS));
      } catch (e) {
        if (e instanceof ConfigRefused && !req.dryRun) await this.refused(req.source, e.problems);
        throw e;
      }
      const forbidden = [...new Set(want.map((w) => req.denied?.(w.type)).filter((x): x is string => !!x))];
      if (forbidden.length) {
        throw new StateError('permission-denied', `the config from ${source} was not applied: ${forbidden.join('; ')}`);
      }
      const steps = this.plan(want, req.mode, req.denied);
      const changes = this.changesOf(steps, true);
      const needsReboot = changes.filter((c) => c.needsReboot).map((c) => `${c.resource} ${c.action}`);
      const result: ApplyResult = {
        changes, needsReboot, ignored: [...req.ignored ?? [], ...skipped], persistedTo: '', persistProblem: '',
      };
      if (req.dryRun) return result;
      const before = req.trySeconds && !this.trying ? this.snapshot() : undefined;
      try {
        await executeSteps(steps, this.target, types);
      } catch (e) {
        await this.setStatus({ state: 'failed', message: `applying the config from ${source} failed part way: `
          + `${(e as Error).message}` });
        throw e;
      }
      const counts = countActions(changes);
      if (req.trySeconds) {
        const until = new Date(this.now().getTime() + req.trySeconds * 1000);
        clearTimeout(this.trying?.timer);
        this.trying = {
          snapshot: this.trying?.snapshot ?? before!, until, source: this.trying?.source ?? this.status.source,
          ...(this.status.instanceId ? { instanceId: this.status.instanceId } : {}),
          timer: setTimeout(() => void this.revert().catch((e: Error) => this.o.log.error(`revert: ${e.message}`)),
            req.trySeconds * 1000),
        };
        result.tryUntil = until.toISOString();
        await this.setStatus({
          state: 'trying', source: req.source, changes, needsReboot, ignored: result.ignored,
          tryUntil: result.tryUntil, appliedAt: this.now().toISOString(), refusedSource: '', refusedProblems: [],
          message: `config from ${source} applied for a try (${counts}); reverted at ${result.tryUntil} `
            + 'unless confirmed',
        });
        this.o.log.info(`config from ${source} applied for a try of ${req.trySeconds}s: ${counts}`);
        return result;
      }
      const instanceId = req.instanceId ?? (this.o.currentInstanceId?.() || undefined);
      const saved = await this.persist(req.source, instanceId);
      Object.assign(result, saved);
      await this.setStatus({
        state: 'applied', source: req.source, instanceId: instanceId ?? '', changes, needsReboot,
        ignored: result.ignored, appliedAt: this.now().toISOString(), refusedSource: '', refusedProblems: [],
        message: `${req.note ? `${req.note}; ` : ''}config from ${source} applied (${counts})`
          + `${needsReboot.length ? `; ${needsReboot.length} change(s) need a reboot` : ''}; ${whereSaved(saved)}`,
      });
      this.o.log.info(`config from ${source} applied: ${counts}`);
      for (const i of req.ignored ?? []) this.o.log.warn(`config from ${source}: ignored ${i}`);
      // What the user read back and applied again: the other layers' specs, skipped as asked, no fault.
      for (const i of skipped) this.o.log.info(`config from ${source}: ${i}`);
      return result;
    });
  }

  /** Keeps the tried config: it becomes the machine config and is persisted. */
  confirm(): Promise<Saved> {
    return this.serial(async () => {
      const t = this.trying;
      if (!t) throw new StateError('failed-precondition', 'no tried config awaits confirmation');
      clearTimeout(t.timer);
      this.trying = undefined;
      const saved = await this.persist(this.status.source, t.instanceId);
      await this.setStatus({
        state: 'applied', tryUntil: undefined,
        message: `tried config from ${this.status.source} confirmed; ${whereSaved(saved)}`,
      });
      this.o.log.info('tried config confirmed');
      return saved;
    });
  }

  /** The config from before the try, back exactly: changed resources restored, pruned ones recreated. */
  private revert(): Promise<void> {
    return this.serial(async () => {
      const t = this.trying;
      if (!t) return;
      this.trying = undefined;
      const steps = this.plan(t.snapshot, 'replace');
      await executeSteps(steps, this.target);
      await this.setStatus({
        state: 'reverted', source: t.source, instanceId: t.instanceId ?? '', tryUntil: undefined,
        changes: this.changesOf(steps, false),
        message: `tried config not confirmed by ${t.until.toISOString()}: reverted (${countActions(steps)})`,
      });
      this.o.log.warn(`tried config not confirmed in time: reverted (${countActions(steps)})`);
    });
  }

  /** The config before a try, to revert to. */
  private snapshot(): Desired[] {
    return desiredAsIs(this.resources(), (p) => this.nameOf(p));
  }

  /** Writes the machine config to the store now; returns where, or why not, and the next status says so. */
  private async persist(source: string, instanceId?: string): Promise<Saved> {
    const saved = await this.saver.save(source, instanceId);
    this.status = { ...this.status, ...saved };
    return saved;
  }

  /**
   * A user changed a resource through the State API (cosictl apply or delete, any COSI client): the machine
   * config changed, so it is persisted shortly (many writes in a burst, one save). Not while a try is pending.
   */
  noteUserWrite(p: Pointer): void {
    const def = this.definitionOf(p.type);
    if (def?.ephemeral) return;
    if (this.trying || this.saver.waiting) return;
    this.saver.afterBurst(() => {
      void this.serial(async () => {
        if (this.trying) return;
        const saved = await this.persist('api', this.instanceId());
        await this.setStatus({
          state: 'applied', source: 'api', message: `config changed through the API; ${whereSaved(saved)}`,
        });
      });
    });
  }

  /** At boot: the persisted config, if any, applied as the whole config (not written back). */
  loadPersisted(): Promise<SavedConfig | undefined> {
    return this.serial(async () => {
      let saved: SavedConfig | undefined;
      try {
        saved = this.o.store.load();
      } catch (e) {
        await this.setStatus({ bootProblem: (e as Error).message });
        await this.refused('state', [(e as Error).message]);
        return undefined;
      }
      if (!saved) {
        await this.setStatus({ state: 'maintenance', message: 'no persisted config' + (this.o.store.path ? ''
          : ` (${this.o.store.why})`) });
        return undefined;
      }
      const where = this.o.store.path ?? 'memory';
      let want: Desired[];
      let types: ExtensionTypes;
      // Its extensions' types as they were saved with it: no image needs fetching to validate it.
      for (const [sha, t] of Object.entries(saved.extensionTypes ?? {})) this.o.extensions?.book.record(sha, t);
      if (saved.interrupted) {
        await this.setStatus({ bootProblem: `${saved.interrupted}; the config saved before it loaded` });
      }
      try {
        let skipped: string[];
        ({ want, types, skipped } = await this.parse(saved.text, where, MAX_SAVED_CONFIG_BYTES, 0,
          { skipForeignLayers: true }));
        // Saved before a config declared the config layer only: kept, those specs left out, said once.
        if (skipped.length) {
          await this.setStatus({ bootProblem: `left out of the saved config: ${skipped.join('; ')}` });
        }
      } catch (e) {
        if (e instanceof ConfigRefused) {
          await this.setStatus({ bootProblem: `the saved config was refused: ${e.problems.join('; ')}` });
          await this.refused('state', e.problems);
          return undefined;
        }
        throw e;
      }
      const steps = this.plan(want, 'replace');
      await executeSteps(steps, this.target, types);
      await this.setStatus({
        state: 'applied', source: 'state', instanceId: saved.instanceId ?? '', appliedAt: this.now().toISOString(),
        changes: this.changesOf(steps, false),
        message: `persisted config applied (${countActions(steps)}; saved from ${saved.source} at ${saved.savedAt})`
          + (saved.interrupted ? `; ${saved.interrupted}: this is the config saved before it` : ''),
      });
      this.o.log.info(`persisted config from ${where} applied: ${countActions(steps)} (saved from ${saved.source})`);
      return saved;
    });
  }

  /** Input refused before it could be parsed (user data that is not a config): reported like any refusal. */
  refuse(source: string, problems: string[]): Promise<void> {
    return this.serial(() => this.refused(source, problems));
  }

  private async refused(source: string, problems: string[]): Promise<void> {
    for (const p of problems) this.o.log.error(`config refused: ${p}`);
    await this.setStatus({
      refusedSource: source, refusedProblems: problems,
      message: `config from ${source} refused (${problems.length} problem(s)); the machine keeps its previous config`,
    });
  }

  private async setStatus(change: Partial<ConfigStatusSpec>): Promise<void> {
    const next = { ...this.status, ...change } as ConfigStatusSpec & Record<string, unknown>;
    for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
    next.resources = this.count();
    this.status = next;
    const p = { namespace: RUNTIME_NS, type: CONFIG_STATUS_TYPE, id: CONFIG_STATUS_ID };
    if (this.o.onApplied && (next.state === 'applied' || next.state === 'trying')) {
      try {
        this.o.onApplied(this.o.state.unownedTypes(this.keptType()));
      } catch (e) {
        // What listens is not the config's business: the config stays applied.
        this.o.log.error(`after the config was applied: ${(e as Error).message}`);
      }
    }
    const cur = this.o.state.findSync(p);
    if (!cur) {
      await this.o.state.create(newResource(p, next), { owner: this.o.owner });
      return;
    }
    const upd = copyResource(cur);
    upd.spec = next;
    await this.o.state.update(upd, { owner: this.o.owner });
  }

  /**
   * At shutdown: writes of the last half second that wait for their save are saved now, and a save under way
   * (its fsyncs run on the thread pool) is finished, so that STATE is unmounted with the config on it. Bounded:
   * an apply still waiting for extension images must not hold the reboot.
   */
  async stop(): Promise<void> {
    clearTimeout(this.trying?.timer);
    const pending = this.saver.cancel();
    const saving = this.serial(async () => {
      if (pending && !this.trying) await this.persist('api', this.instanceId());
    });
    await this.saver.finish(saving);
  }
}

function countActions(changes: readonly { action: string }[]): string {
  const n = new Map<string, number>();
  for (const c of changes) n.set(c.action, (n.get(c.action) ?? 0) + 1);
  return [...n].map(([a, k]) => `${k} ${a}`).join(', ') || 'nothing to change';
}
