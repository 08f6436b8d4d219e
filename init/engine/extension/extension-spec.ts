// extension-spec: runs the extensions users declare (ExtensionSpec, config namespace), as a spec controller
// (cosi/controller/spec-controller.ts): the spec is held with the finalizer "engine" until the extension is
// stopped, so a delete returns once it is. For each: fetch the image and check its hash, mount it read-only,
// read and check its manifest, register the types it defines, make its cgroup, and hand it to the supervisor
// as a plugin whose process is the launcher (`init extension-exec`) that becomes the extension's program,
// confined, as a uid of its own. Its status is an ExtensionStatus (runtime namespace), written by the engine
// only, and follows its PluginStatus. A new sha256 or source replaces it (the old process stops first, then
// its image goes); a deleted ExtensionSpec stops it (the undo). A fetch that failed on the network is tried
// again by the spec controller, less and less often (TryAgain); so is one that failed for the machine's sake (a
// loop device, a cgroup, a volume, a type another extension holds or that is not defined yet), with its image kept
// so a try fetches nothing. What the image's own bytes refuse is final until the spec changes. Its volumes
// (extension-volumes.ts) are made before it starts and kept when it stops; a delete annotated
// PURGE_VOLUMES_ANNOTATION removes them. What else it is given of the machine (devices, its secret) and taken
// back when it stops: extension-grants.ts.
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../../../native/errno.ts';
import type { Controller } from '../../../cosi/controller/contract.ts';
import type { Resource } from '../../../cosi/resource/resource.ts';
import { DEFAULT_RETRY, specController, TryAgain } from '../../../cosi/controller/spec-controller.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import { DEFINITION_TYPE, META_NAMESPACE } from '../../../cosi/meta/definition.ts';
import type { Admission } from '../../../machinery/config/admission.ts';
import type { Logger } from '../../../machinery/log.ts';
import {
  EXTENSION_NAME_RE, MANIFEST_PATH, PURGE_VOLUMES_ANNOTATION, type ExtensionManifest,
} from '../../../machinery/model/extension-manifest.ts';
import { encodeLaunch, EXTENSION_LAUNCH_ENV } from '../../../machinery/model/extension-launch.ts';
import {
  type ExtensionSecretSpec, type ExtensionSpec, type ExtensionStatusSpec, type HealthCheck, type HealthStatusSpec,
  type PluginStatusSpec, type RegistryCredentialSpec, type ExtensionOverrideSpec,
} from '../../../machinery/model/runtime-types.ts';
import { parseOciReference } from '../../../machinery/oci/registry.ts';
import { ociImagePath } from './oci-fetch.ts';
import { missingMountPoints, resolveInImage } from '../../../machinery/sys/extension-root.ts';
import { capabilityNames, capabilitySet } from '../../../machinery/sys/capabilities.ts';
import { imagePath, RefusedImage, sweepPartials, sweepUnusedImages } from './fetch.ts';
import { extensionUids } from './extension-uids.ts';
import { purgeVolumes, volumeUsage } from './extension-volumes.ts';
import { secretKey } from './extension-secrets.ts';
import { grantMachineParts, takeBack, type Grants } from './extension-grants.ts';
import {
  ExtensionProblems, fetchExtensionImage, mountImageOn, readManifest, registerExtensionTypes, unmountImageFrom,
  type ExtensionMachine, type ExtensionTypeBook, type RealMachine,
} from './types.ts';
import { ENGINE_OWNER, type PluginSupervisor } from '../supervisor.ts';
import {
  CONFIG_NS, EXTENSION_SECRET_TYPE, EXTENSION_STATUS_TYPE, EXTENSION_TYPE, HEALTH_STATUS_TYPE, PLUGIN_STATUS_TYPE,
  REGISTRY_CREDENTIAL_TYPE, RUNTIME_NS, EXTENSION_OVERRIDE_TYPE,
} from '../../../proto/gen/resource-types.ts';
import { HEALTH_ID } from '../../../machinery/model/singleton-ids.ts';
import { NO_ADDRESSES_CONFIGURED } from '../health.ts';

export interface ExtensionSpecOptions {
  state: MemoryState;
  log: Logger;
  /** Where extensions run: their processes started and stopped. */
  supervisor: Pick<PluginSupervisor, 'add' | 'remove'>;
  admission: Admission;
  pluginSocket: string;
  machine: ExtensionMachine;
  /** What the machine knows of extensions' types: each manifest's is recorded there. */
  types: ExtensionTypeBook;
  /** The built-in plugins: their names, and the types they write (an extension may write none of them). */
  builtins: readonly { name: string; outputs: readonly string[] }[];
  /** The first wait before a failed fetch is tried again (DEFAULT_RETRY's 5 s), doubled each time up to 5 minutes. */
  firstRetryMs?: number;
}

/** An extension in effect: its image mounted and checked, its process handed to the supervisor once launched. */
interface Running {
  spec: ExtensionSpec; dir: string; manifest: ExtensionManifest; status: ExtensionStatusSpec;
  /** Its cgroup, once launched; undefined while it waits for what its manifest's `after` names. */
  group?: string;
  /** When its ExtensionSpec was declared (for start_seconds). */
  declaredAt: number;
  /** Its cgroup's OOM kills counted so far (memory.events). */
  oomKills: number;
  /** The version of its PluginStatus its status follows already. */
  followed: number;
  /** What it was given of the machine's once launched (volumes, devices, secret), to give back when it stops. */
  grants?: Grants;
}

/** The OOM kills a cgroup counts (memory.events oom_kill); 0 when it cannot say. */
function oomKillsOf(group: string): number {
  let text: string;
  try {
    text = readFileSync(join(group, 'memory.events'), 'utf8');
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return 0;
    throw e;
  }
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}
const mib = (bytes?: number) => (bytes === undefined ? 'none' : `${Math.round(bytes / 2 ** 20)} MiB`);

const sameSpec = (a: ExtensionSpec, b: ExtensionSpec) => a.source === b.source && a.sha256 === b.sha256
  && (a.devices ?? []).join('\n') === (b.devices ?? []).join('\n') && !a.insecure === !b.insecure
  && (a.ca ?? '') === (b.ca ?? '');
const emptyStatus = (spec: ExtensionSpec): ExtensionStatusSpec => ({
  phase: 'fetching', sha256: spec.sha256, version: '', description: '', error: '', types: [], outputs: [],
  capabilities: [], cgroup: '', imageBytes: 0, uid: 0, critical: false, restarts: 0, override: '',
});

/** What the controller reads besides its specs: the processes' statuses, and what `after` waits for. */
interface World {
  plugins: ReadonlyMap<string, Resource<PluginStatusSpec>>;
  /** Each health check by name (network: addresses; time). */
  checks: ReadonlyMap<string, HealthCheck>;
  /** Each extension's phase. */
  phases: ReadonlyMap<string, string>;
  /** Each extension's secret, by its name. */
  secrets: ReadonlyMap<string, ExtensionSecretSpec>;
  /** Each registry's credentials, by its HOST[:PORT]. */
  credentials: ReadonlyMap<string, RegistryCredentialSpec>;
  /** The development build pushed for each extension (ExtensionOverride), by its name. */
  overrides: ReadonlyMap<string, ExtensionOverrideSpec>;
}

/**
 * The spec in effect: the declared one, or where a build was pushed for it, that build (kept beside the fetched
 * images by its sha256, so fetching it finds it there), and what its status says of it.
 */
function inEffect(
  spec: ExtensionSpec, pushed: ExtensionOverrideSpec | undefined, imagesDir: string | undefined,
): { spec: ExtensionSpec; override: string } {
  if (!pushed || imagesDir === undefined) return { spec, override: '' };
  const until = pushed.persist ? 'kept across boots' : 'until the next boot';
  return {
    spec: { ...spec, source: imagePath(imagesDir, pushed.sha256), sha256: pushed.sha256 },
    override: `pushed ${pushed.pushedAt}, ${until}; declared ${spec.sha256.slice(0, 12)}`,
  };
}

/**
 * What besides its spec a refusal of extension `name` depends on: its secret, and the credentials of the registry
 * its source names (a pull refused for want of them is tried again once they are given).
 */
function refusalKey(name: string, spec: ExtensionSpec, w: World): string {
  const ref = parseOciReference(spec.source);
  const cred = typeof ref === 'string' ? undefined : w.credentials.get(ref.registry);
  const credKey = cred ? createHash('sha256').update(`${cred.username}\0${cred.password}`).digest('hex') : '';
  return `${secretKey(w.secrets.get(name))}\n${credKey}`;
}

/** What of `after` is not so yet, each with why (empty: it may start). */
function unmetAfter(after: readonly string[], w: World): string[] {
  return after.flatMap((what) => {
    if (what === 'network' || what === 'time') {
      const c = w.checks.get(what === 'network' ? 'addresses' : 'time');
      // A network with nothing configured on it (yet: the config may still be coming) is not one to wait for.
      const none = what === 'network' && c?.message === NO_ADDRESSES_CONFIGURED;
      if (c?.ok && !none) return [];
      return [`${what} (${c ? c.message : 'no health status yet'})`];
    }
    const phase = w.phases.get(what);
    return phase === 'running' ? [] : [`${what} (${phase ?? 'not declared'})`];
  });
}

export function extensionSpec(o: ExtensionSpecOptions): Controller {
  /** What runs now, by name: the processes handed to the supervisor, their mounts and cgroups. */
  const running = new Map<string, Running>();
  /**
   * The spec (and refusalKey) each extension that will not run was refused with: not tried again until one changes;
   * `kept`: why the version running was not replaced by it.
   */
  const refused = new Map<string, { spec: ExtensionSpec; key: string; kept?: string }>();
  /** What a start that will be tried again found before it failed (its version, critical): its status meanwhile. */
  const attempted = new Map<string, ExtensionStatusSpec>();
  /** The spec each extension runs by: its ExtensionSpec's, or a pushed build's (inEffect). */
  const inEffectNow = new Map<string, ExtensionSpec>();
  const log = o.log;
  const uids = extensionUids('refuse' in o.machine ? undefined : o.machine.uidsFile, (m) => log.warn(m));
  const builtinWriters = new Map(o.builtins.flatMap((b) => b.outputs.map((t) => [t, b.name] as const)));
  if (!('refuse' in o.machine)) {
    const left = sweepPartials(o.machine.imagesDir);
    if (left.length) {
      log.warn(`extensions: removed ${left.length} image(s) a fetch left half written: ${left.join(', ')}`);
    }
  }
  /** Kept images no extension has used for a day go (an upgrade leaves the old version's behind). */
  function sweepImages(machine: RealMachine, fetching: string): void {
    const inUse = new Set([fetching, ...[...running.values()].map((r) => r.spec.sha256)]);
    const gone = sweepUnusedImages(machine.imagesDir, inUse);
    if (gone.length) log.info(`extensions: removed ${gone.length} image(s) unused for a day: ${gone.join(', ')}`);
  }

  function unmountImage(machine: RealMachine, name: string, dir: string): void {
    try {
      unmountImageFrom(machine, dir);
    } catch (e) {
      log.warn(`extension ${name}: unmounting ${dir}: ${(e as Error).message}`);
    }
  }
  /** The kept image (a file, or a pulled tree), unless a running extension uses it: /var would keep every version. */
  function forgetImage(machine: RealMachine, sha256: string): void {
    if ([...running.values()].some((x) => x.spec.sha256 === sha256)) return;
    rmSync(imagePath(machine.imagesDir, sha256), { force: true });
    rmSync(ociImagePath(machine.imagesDir, sha256), { recursive: true, force: true });
  }

  /** Gives back what `r` was given of the machine's (logged when a device cannot be). */
  function giveBack(name: string, r: Running): void {
    if (!r.grants || 'refuse' in o.machine) return;
    for (const p of takeBack(o.machine, name, r.grants)) log.warn(`extension ${name}: devices: ${p}`);
    delete r.grants;
  }

  async function stop(name: string): Promise<void> {
    const r = running.get(name);
    if (!r) return;
    if (r.group) await o.supervisor.remove(name);
    running.delete(name);
    giveBack(name, r);
    if ('refuse' in o.machine) return;
    unmountImage(o.machine, name, r.dir);
    if (r.group) {
      await o.machine.removeGroup(r.group).catch((e: Error) => log.warn(`extension ${name}: ${e.message}`));
    }
    forgetImage(o.machine, r.spec.sha256);
    log.info(`extension ${name}: stopped (${r.manifest.version}, sha256 ${r.spec.sha256.slice(0, 12)})`);
  }

  const failed = (name: string, status: ExtensionStatusSpec, problems: string[]): ExtensionStatusSpec => {
    log.error(`extension ${name}: ${problems.join('; ')}`);
    return { ...status, phase: 'failed', error: problems.join('\n') };
  };

  /**
   * A start that failed after its image was fetched (its mount undone): final when the image's own bytes are the
   * cause (the image goes); otherwise thrown as TryAgain, the image kept, to be tried again on a backoff.
   */
  function failedOrRetried(
    machine: RealMachine, name: string, spec: ExtensionSpec, status: ExtensionStatusSpec, e: unknown,
  ): ExtensionStatusSpec {
    const problems = e instanceof ExtensionProblems ? e.problems : [(e as Error).message];
    if (e instanceof ExtensionProblems && e.final) {
      forgetImage(machine, spec.sha256);
      return failed(name, status, problems);
    }
    attempted.set(name, { ...status });
    throw new TryAgain(problems.join('\n'), { cause: e });
  }

  /**
   * Starts extension `name` as `spec` says: fetched, mounted and checked, then launched at once or, while what its
   * manifest's `after` names is not so, waiting. Its status; failed with every problem when it cannot run.
   */
  async function start(
    name: string, spec: ExtensionSpec, declaredAt: number, report: (s: ExtensionStatusSpec) => Promise<void>,
    world: World, override: string,
  ): Promise<ExtensionStatusSpec> {
    const status = { ...emptyStatus(spec), override };
    if ('refuse' in o.machine) return failed(name, status, [o.machine.refuse]);
    // Its name becomes a path, a log source and a PluginStatus: checked before anything else.
    if (!EXTENSION_NAME_RE.test(name)) {
      return failed(name, status, [`"${name}": an extension's name is lowercase letters, digits and dashes, `
        + 'at most 63']);
    }
    if (o.builtins.some((b) => b.name === name)) {
      return failed(name, status, [`"${name}" is a built-in plugin's name`]);
    }
    const machine = o.machine;
    await report(status);
    sweepImages(machine, spec.sha256);
    // A replacement's image, fetched before the version it replaces stopped, is found kept (checked this boot).
    const image = await fetchExtensionImage(machine, name, spec, (r) => world.credentials.get(r));
    if (image instanceof RefusedImage) return failed(name, status, [`fetching: ${image.message}`]);
    // The server may be back later: the spec controller tries again.
    if (image instanceof Error) throw new TryAgain(`fetching: ${image.message}`, { cause: image });
    status.imageBytes = image.bytes;
    const dir = join(machine.mountsDir, `${name}-${spec.sha256.slice(0, 12)}`);
    const unmountable = mountImageOn(machine, image.path, dir);
    if (unmountable) return failedOrRetried(machine, name, spec, status, unmountable);
    // From here on, whatever goes wrong takes the mount (and the kept image) with it.
    let r: Running | undefined;
    try {
      const checked = checkImage(name, dir);
      if (checked instanceof ExtensionProblems) throw checked;
      const manifest = checked;
      Object.assign(status, {
        version: manifest.version, description: manifest.description, types: manifest.types.map((t) => t.type),
        outputs: manifest.outputs, critical: manifest.critical,
      });
      await registerExtensionTypes(o.state, o.admission, name, manifest.types);
      o.types.record(spec.sha256, manifest.types);
      r = { spec, dir, manifest, status, declaredAt, oomKills: 0, followed: 0 };
      running.set(name, r);
    } catch (e) {
      unmountImage(machine, name, dir);
      return failedOrRetried(machine, name, spec, status, e);
    }
    log.info(`extension ${name}: ${r.manifest.version} mounted and checked (${image.bytes} bytes, `
      + `${image.reused ? 'kept from before' : 'fetched'}, outputs ${r.manifest.outputs.join(', ') || 'none'})`);
    return launchWhenDue(name, r, report, world);
  }

  /** Launches `r` once nothing its `after` names is missing; meanwhile its status says what it waits for. */
  async function launchWhenDue(
    name: string, r: Running, report: (s: ExtensionStatusSpec) => Promise<void>, world: World,
  ): Promise<ExtensionStatusSpec> {
    const unmet = unmetAfter(r.manifest.after, world);
    if (unmet.length) {
      const error = `waiting for ${unmet.join(', ')}`;
      if (r.status.phase !== 'waiting' || r.status.error !== error) log.info(`extension ${name}: ${error}`);
      Object.assign(r.status, { phase: 'waiting', error });
      return { ...r.status };
    }
    return launch(name, r, report);
  }

  /** Its uid, volumes and cgroup made, its launcher handed to the supervisor; failed (and gone) when it cannot. */
  async function launch(
    name: string, r: Running, report: (s: ExtensionStatusSpec) => Promise<void>,
  ): Promise<ExtensionStatusSpec> {
    const machine = o.machine as RealMachine;
    const { dir, manifest, status, spec } = r;
    try {
      const uid = uids.uidOf(name);
      const secret = o.state.findSync({ namespace: CONFIG_NS, type: EXTENSION_SECRET_TYPE, id: name })?.spec as
        ExtensionSecretSpec | undefined;
      const g = grantMachineParts({ machine, name, uid, image: dir, manifest, spec, secret });
      r.grants = g;
      if (g.volumes) status.volumes = g.volumes;
      for (const note of g.notes) log.warn(`extension ${name}: volumes: ${note}`);
      const group = machine.prepareGroup(name, {
        ...(manifest.memoryBytes !== undefined ? { memoryBytes: manifest.memoryBytes } : {}),
        ...(manifest.cpuPercent !== undefined ? { cpuPercent: manifest.cpuPercent } : {}),
      });
      Object.assign(status, {
        cgroup: group, phase: 'starting', error: '', uid, prepareSeconds: (Date.now() - r.declaredAt) / 1000,
        ...(manifest.memoryBytes !== undefined ? { memoryMaxBytes: manifest.memoryBytes } : {}),
        ...(manifest.cpuPercent !== undefined ? { cpuPercent: manifest.cpuPercent } : {}),
      });
      r.group = group;
      await report(status);
      o.supervisor.add({
        name, outputs: manifest.outputs, owner: name, args: ['extension-exec'],
        ownMounts: false, ready: manifest.ready,
        env: {
          [EXTENSION_LAUNCH_ENV]: encodeLaunch({
            name, image: dir, cgroup: group, uid, pluginSocket: o.pluginSocket,
            executable: manifest.executable, args: manifest.args, env: { ...manifest.env, ...g.env },
            capabilities: manifest.capabilities, workingDir: manifest.workingDir,
            ...(g.volumeMounts.length ? { volumes: g.volumeMounts } : {}),
            ...(g.devices.length ? { devices: g.devices.map((d) => ({ source: d.source, target: d.target })) } : {}),
            ...(g.secretsDir ? { secrets: g.secretsDir } : {}),
          }),
        },
      });
    } catch (e) {
      running.delete(name);
      giveBack(name, r);
      unmountImage(machine, name, dir);
      return failedOrRetried(machine, name, spec, status, e);
    }
    log.info(`extension ${name}: ${manifest.version} starting as uid ${status.uid}`);
    return { ...status };
  }

  /**
   * The manifest of the image mounted on `dir`, or every problem that keeps it from running: final but for types
   * it writes that are not defined yet (another extension may define them).
   */
  function checkImage(name: string, dir: string): ExtensionManifest | ExtensionProblems {
    const problems = missingMountPoints(dir);
    const parsed = readManifest(dir);
    if (!parsed.manifest) {
      return new ExtensionProblems([...parsed.problems.map((p) => `${MANIFEST_PATH}: ${p}`), ...problems]);
    }
    const manifest = parsed.manifest;
    if (manifest.name !== name) {
      problems.push(`${MANIFEST_PATH} names the extension "${manifest.name}", its ExtensionSpec "${name}"`);
    }
    const exe = resolveInImage(dir, manifest.executable);
    const exeStat = exe === undefined ? undefined : lstatSync(join(dir, exe));
    if (!exeStat?.isFile() || (exeStat.mode & 0o111) === 0) {
      problems.push(`executable ${manifest.executable}: no executable file in the image`);
    }
    for (const v of manifest.volumes) {
      const at = resolveInImage(dir, v.path);
      if (at === undefined || !lstatSync(join(dir, at)).isDirectory()) {
        problems.push(`volumes: ${v.name}: ${v.path}: no directory in the image to mount it on (make it, empty)`);
      }
    }
    const own = new Set(manifest.types.map((t) => t.type));
    let undefinedTypes = 0;
    for (const out of manifest.outputs) {
      if (own.has(out)) continue;
      const writer = builtinWriters.get(out);
      if (writer) problems.push(`outputs: ${out} is written by the machine's plugin ${writer}`);
      else if (!o.state.findSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: out.toLowerCase() })) {
        problems.push(`outputs: ${out} is no type of this machine's (yet), nor one the extension defines`);
        undefinedTypes++;
      }
    }
    return problems.length ? new ExtensionProblems(problems, undefinedTypes < problems.length) : manifest;
  }

  /** The process's fate, as the supervisor publishes it, becomes the running extension's phase. */
  function follow(name: string, r: Running, plugin: Resource<PluginStatusSpec> | undefined): ExtensionStatusSpec {
    // Once per PluginStatus change: the memory read here changes on every read, and a status written on every
    // reconcile would wake this controller again (its statuses are its input).
    if (!plugin || plugin.metadata.version === r.followed) return { ...r.status };
    r.followed = plugin.metadata.version;
    const p = plugin.spec;
    const s = r.status;
    s.restarts = p.restarts;
    if (p.state === 'running' && p.pid) {
      s.phase = 'running';
      s.error = '';
      s.startSeconds ??= (Date.now() - r.declaredAt) / 1000;
      try {
        s.capabilities = capabilityNames(capabilitySet(readFileSync(`/proc/${p.pid}/status`, 'utf8'), 'CapEff'));
      } catch (e) { log.warn(`extension ${name}: reading /proc/${p.pid}/status: ${(e as Error).message}`); }
      try {
        s.memoryBytes = Number(readFileSync(join(r.group!, 'memory.current'), 'utf8').trim());
      } catch (e) {
        log.warn(`extension ${name}: reading ${r.group}/memory.current: ${(e as Error).message}`);
      }
      if (r.grants?.backing && s.volumes) {
        try {
          s.volumes = volumeUsage(s.volumes, r.grants.backing);
        } catch (e) { log.warn(`extension ${name}: reading its volumes' usage: ${(e as Error).message}`); }
      }
    } else if (p.state === 'backoff') {
      s.phase = 'crashing';
      const exit = p.lastExit?.signal ? `signal ${p.lastExit.signal}` : `code ${p.lastExit?.code}`;
      const ooms = oomKillsOf(r.group!);
      // Killed for its own limit: its cgroup says so (the machine's memory is not what ran out).
      s.error = ooms > r.oomKills && p.lastExit?.signal === 'SIGKILL'
        ? `killed by the OOM killer: it used all of its memory (memory.max ${mib(s.memoryMaxBytes)})`
        : p.lastError ?? `exited (${exit})`;
      r.oomKills = ooms;
    }
    return { ...s };
  }

  return specController<ExtensionSpec, ExtensionStatusSpec, World>({
    name: 'extension-spec', owner: ENGINE_OWNER,
    namespace: CONFIG_NS, specType: EXTENSION_TYPE, statusNamespace: RUNTIME_NS, statusType: EXTENSION_STATUS_TYPE,
    inputs: [
      { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, kind: 'weak' },
      { namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, kind: 'weak' }, // network and time, for `after`
      { namespace: CONFIG_NS, type: EXTENSION_SECRET_TYPE, kind: 'weak' },
      { namespace: CONFIG_NS, type: REGISTRY_CREDENTIAL_TYPE, kind: 'weak' }, // a refused pull tried with new ones
      { namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE, kind: 'weak' }, // a build pushed, or its push undone
    ],
    retry: { ...DEFAULT_RETRY, ...(o.firstRetryMs !== undefined ? { firstMs: o.firstRetryMs } : {}) },
    async observe(ctx) {
      const list = await ctx.state.list({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE });
      const health = (await ctx.state.list({ namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE }))
        .find((r) => r.metadata.id === HEALTH_ID)?.spec as HealthStatusSpec | undefined;
      const statuses = await ctx.state.list({ namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE });
      return {
        plugins: new Map(list.map((r) => [r.metadata.id, r as Resource<PluginStatusSpec>])),
        checks: new Map((health?.checks ?? []).map((c) => [c.name, c])),
        phases: new Map(statuses.map((r) => [r.metadata.id, (r.spec as ExtensionStatusSpec).phase ?? 'unknown'])),
        secrets: new Map((await ctx.state.list({ namespace: CONFIG_NS, type: EXTENSION_SECRET_TYPE }))
          .map((r) => [r.metadata.id, r.spec as ExtensionSecretSpec])),
        credentials: new Map((await ctx.state.list({ namespace: CONFIG_NS, type: REGISTRY_CREDENTIAL_TYPE }))
          .map((r) => [r.metadata.id, r.spec as RegistryCredentialSpec])),
        overrides: new Map((await ctx.state.list({ namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE }))
          .map((r) => [r.metadata.id, r.spec as ExtensionOverrideSpec])),
      };
    },
    async apply(name, declared, prev, world, ctx) {
      const effective = inEffect(declared, world.overrides.get(name),
        'refuse' in o.machine ? undefined : o.machine.imagesDir);
      const spec = effective.spec;
      inEffectNow.set(name, spec);
      const have = running.get(name);
      // Launched with another secret (or none): started again with this one.
      const sameSecret = !have?.grants || have.grants.secretKey === secretKey(world.secrets.get(name));
      if (have && sameSpec(have.spec, spec) && sameSecret) {
        if (!have.group) return launchWhenDue(name, have, ctx.report, world);
        return follow(name, have, world.plugins.get(name));
      }
      const key = refusalKey(name, spec, world);
      const no = refused.get(name);
      if (prev && no && sameSpec(no.spec, spec) && no.key === key) {
        // The version it would have replaced still runs: its status, with why it was not replaced.
        return have && no.kept ? { ...follow(name, have, world.plugins.get(name)), error: no.kept } : prev;
      }
      refused.delete(name);
      if (have && !sameSpec(have.spec, spec) && !('refuse' in o.machine)) {
        // The new image is had before the running version stops: one that cannot be leaves it running.
        const image = await fetchExtensionImage(o.machine, name, spec, (r) => world.credentials.get(r));
        if (image instanceof RefusedImage) {
          const kept = `not replaced: fetching: ${image.message}`;
          log.error(`extension ${name}: ${kept}`);
          refused.set(name, { spec, key, kept });
          return { ...follow(name, have, world.plugins.get(name)), error: kept };
        }
        if (image instanceof Error) throw new TryAgain(`fetching: ${image.message}`, { cause: image });
      }
      if (have) {
        await ctx.report({ ...have.status, phase: 'stopping' });
        await stop(name);
      }
      // Since its ExtensionSpec last changed (the resource as listed, before this controller's finalizer).
      let status: ExtensionStatusSpec;
      try {
        status = await start(name, spec, ctx.resource.metadata.updated, ctx.report, world, effective.override);
      } catch (e) {
        if (e instanceof TryAgain) throw e;
        status = failed(name, emptyStatus(spec), [(e as Error).message]);
      }
      // Not tried again at every reconcile (a refused image fetched again and again): a new spec is.
      if (status.phase === 'failed') refused.set(name, { spec, key });
      return status;
    },
    failed: (name, declared, _prev, error) => {
      const spec = inEffectNow.get(name) ?? declared;
      const have = running.get(name);
      // A replacement that could not be fetched yet: the version that runs is still what the status says.
      if (have && !sameSpec(have.spec, spec)) return { ...have.status, error: `not replaced yet: ${error}` };
      const tried = attempted.get(name);
      attempted.delete(name);
      return failed(name, tried?.sha256 === spec.sha256 ? tried : emptyStatus(spec), [error]);
    },
    async undo(name, _prev, _plugins, resource) {
      refused.delete(name);
      inEffectNow.delete(name);
      await stop(name);
      if (resource?.metadata.annotations[PURGE_VOLUMES_ANNOTATION] !== 'true' || 'refuse' in o.machine) return;
      const volumes = o.machine.volumes;
      if (!volumes) return;
      const gone = purgeVolumes(volumes.dir, name, volumes.backing());
      if (gone.length) log.info(`extension ${name}: volumes purged: ${gone.join(', ')}`);
    },
  });
}
