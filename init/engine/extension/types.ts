// extension-types: the types an extension defines, known before it runs. The runner registers them
// as it starts the extension; the machine config learns them from the image's manifest while it
// validates a config that declares the extension (so one document set may declare an extension and
// resources of its types) and registers them before it creates those resources. Both register
// through here: the users' admission, owner extension/NAME, all or none.
import { lstatSync, mkdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import { newResource, type Resource } from '../../../cosi/resource/resource.ts';
import { copyResource } from '../../../cosi/state/freeze.ts';
import { sameSpec } from '../../../cosi/spec/spec-equal.ts';
import {
  DEFINITION_TYPE, fillDefinition, META_NAMESPACE, NAMESPACE_TYPE, type DefinitionInput,
} from '../../../cosi/meta/definition.ts';
import type { Admission } from '../../../machinery/config/admission.ts';
import {
  EXTENSION_NAME_RE, MANIFEST_PATH, parseManifest, type ManifestResult,
} from '../../../machinery/model/extension-manifest.ts';
import type { ExtensionSpec } from '../../../machinery/model/runtime-types.ts';
import type { GroupLimits } from '../../../machinery/sys/cgroup.ts';
import { isErrno } from '../../../native/errno.ts';
import { fetchImage, RefusedImage, type FetchedImage } from './fetch.ts';
import { pullOciImage } from './oci-fetch.ts';
import { parseOciReference, type RegistryAccess } from '../../../machinery/oci/registry.ts';
import type { VolumeBacking } from './extension-volumes.ts';

/** What running extensions takes from the machine: PID 1 gives the real ones; a host engine gives `refuse`. */
export type ExtensionMachine = { refuse: string } | RealMachine;
export interface RealMachine {
  /** Where fetched images are kept, and where they are mounted. */
  imagesDir: string;
  mountsDir: string;
  mount(image: string, dir: string): void;
  unmount(dir: string): void;
  prepareGroup(name: string, limits: GroupLimits): string;
  /** Ends what still runs in the group and removes it; rejects when it would not go. */
  removeGroup(dir: string): Promise<void>;
  fetch?: (source: string, sha256: string, dir: string) => Promise<FetchedImage | Error>;
  /** Flushes writes to the disk (sync(2)): a pulled image is whole on disk before it takes its name. */
  sync?: () => Promise<void>;
  /** Where the uid each extension runs as is kept across boots (on STATE; extension-uids.ts); absent: memory. */
  uidsFile?: string;
  /** Where extensions' secret files are written for their launchers to bind (memory); absent: no secret files. */
  secretsDir?: string;
  /** Where extensions' volumes are kept, and what holds them (extension-volumes.ts); absent: no volumes here. */
  volumes?: { dir: string; backing(): VolumeBacking };
}

/** The credentials the machine has for a registry (HOST[:PORT]): its RegistryCredential's. */
export type CredentialsOf = (registry: string) => { username: string; password: string } | undefined;

/** How an oci:// source's registry is reached: as its spec says, signed in as `credentialsOf` says. */
export function registryAccess(spec: ExtensionSpec, credentialsOf: CredentialsOf | undefined): RegistryAccess {
  const ref = parseOciReference(spec.source);
  const credentials = typeof ref === 'string' ? undefined : credentialsOf?.(ref.registry);
  return {
    ...(spec.insecure ? { insecure: true } : {}), ...(spec.ca ? { ca: [spec.ca] } : {}),
    ...(credentials ? { credentials } : {}),
  };
}

/**
 * The image `spec` names for extension `name`: fetched (fetchImage) or pulled from a registry (pullOciImage), or kept
 * from before. A machine's own `fetch` (tests) takes every source.
 */
export function fetchExtensionImage(
  machine: RealMachine, name: string, spec: ExtensionSpec, credentialsOf?: CredentialsOf,
): Promise<FetchedImage | Error> {
  if (machine.fetch) return machine.fetch(spec.source, spec.sha256, machine.imagesDir);
  if (!spec.source.startsWith('oci://')) return fetchImage(spec.source, spec.sha256, machine.imagesDir);
  return pullOciImage({
    name, source: spec.source, sha256: spec.sha256, dir: machine.imagesDir,
    access: registryAccess(spec, credentialsOf), ...(machine.sync ? { sync: machine.sync } : {}),
  });
}

/** Mounts `image` on the directory `dir`, made for it; an Error (the directory gone again) when it cannot. */
export function mountImageOn(machine: RealMachine, image: string, dir: string): Error | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    machine.mount(image, dir);
    return undefined;
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return new Error(`mounting ${image} on ${dir}: ${(e as Error).message}`, { cause: e });
  }
}

/** Unmounts what mountImageOn mounted and removes its directory. */
export function unmountImageFrom(machine: RealMachine, dir: string): void {
  machine.unmount(dir);
  rmdirSync(dir);
}

/** The owner of what an extension registers and writes (its writes: its name alone). */
export const extensionOwner = (name: string) => `extension/${name}`;

/**
 * Every problem that keeps an extension from running (or its types from registering), thrown as one. `final`: the
 * image's own (its bytes will say the same at every try); otherwise the machine's, which a later try may not meet.
 */
export class ExtensionProblems extends Error {
  constructor(readonly problems: string[], readonly final = true) { super(problems.join('; ')); }
}

/** The manifest at the root of the image mounted on `dir`, read as the file it is there (a link is refused). */
export function readManifest(dir: string): ManifestResult {
  const st = lstatSync(join(dir, MANIFEST_PATH), { throwIfNoEntry: false });
  if (!st?.isFile()) return { problems: [`the image has no ${MANIFEST_PATH} (a file, not a link)`] };
  return parseManifest(readFileSync(join(dir, MANIFEST_PATH), 'utf8'));
}

/** How many times a fetch its server reset is tried again when no patience was given. */
const RESET_RETRIES = 2;

/** True when the fetch failed because its connection was reset or cut (the error or its cause says so). */
function resetMidway(e: Error): boolean {
  const cause = e.cause;
  return isErrno(e, 'ECONNRESET', 'EPIPE') || isErrno(cause, 'ECONNRESET', 'EPIPE') || / cut short: /.test(e.message);
}

/**
 * The types of extensions' images, by sha256 (an image's manifest never changes): learned from the image,
 * or from the saved machine config, which keeps those of the extensions it declares so that the next boot
 * validates it before any network is up.
 */
export class ExtensionTypeBook {
  private readonly bySha = new Map<string, DefinitionInput[]>();

  constructor(private readonly machine: ExtensionMachine, private readonly credentialsOf?: CredentialsOf) {}

  known(sha256: string): DefinitionInput[] | undefined { return this.bySha.get(sha256); }

  record(sha256: string, types: DefinitionInput[]): void { this.bySha.set(sha256, types); }

  /**
   * The types extension `name` (declared as `spec`) defines: known already, or from its image's manifest,
   * fetched (kept by hash, so that starting it later fetches nothing; a failure on the network tried again
   * for `patienceMs`), mounted a moment and read. An Error says why they cannot be known.
   */
  async learn(
    name: string, spec: ExtensionSpec, patienceMs = 0, given?: CredentialsOf,
  ): Promise<DefinitionInput[] | Error> {
    const known = this.bySha.get(spec.sha256);
    if (known) return known;
    const machine = this.machine;
    if ('refuse' in machine) return new Error(machine.refuse);
    if (!EXTENSION_NAME_RE.test(name)) return new Error(`"${name}" is no extension name`);
    const deadline = Date.now() + patienceMs;
    // Credentials given with the spec (the same config) before those the machine has.
    const credentialsOf: CredentialsOf = (r) => given?.(r) ?? this.credentialsOf?.(r);
    let image = await fetchExtensionImage(machine, name, spec, credentialsOf);
    // A config that comes as the machine boots may come before its network: the fetch is tried again a while.
    // A connection reset mid-way is tried again twice even for a user, who waits: one more try mends it.
    let resets = 0;
    for (let wait = 1000; image instanceof Error && !(image instanceof RefusedImage)
      && (Date.now() + wait < deadline || (resetMidway(image) && resets++ < RESET_RETRIES));
      wait = Math.min(wait * 2, 10_000)) {
      await new Promise((r) => setTimeout(r, wait));
      image = await fetchExtensionImage(machine, name, spec, credentialsOf);
    }
    if (image instanceof Error) return image;
    const dir = join(machine.mountsDir, `.types-${name}-${spec.sha256.slice(0, 12)}`);
    const unmountable = mountImageOn(machine, image.path, dir);
    if (unmountable) return unmountable;
    try {
      const read = readManifest(dir);
      if (!read.manifest) return new Error(`${MANIFEST_PATH}: ${read.problems.join('; ')}`);
      this.bySha.set(spec.sha256, read.manifest.types);
      return read.manifest.types;
    } finally {
      unmountImageFrom(machine, dir);
    }
  }
}

/**
 * Registers (or updates) extension `name`'s types through the users' admission, as owner extension/NAME;
 * all are checked before any is written. Throws ExtensionProblems naming each problem.
 */
export async function registerExtensionTypes(
  state: MemoryState, admission: Admission, name: string, types: readonly DefinitionInput[],
): Promise<void> {
  const owner = extensionOwner(name);
  const problems: string[] = [];
  let taken = false;
  const writes: { r: Resource; cur?: Resource }[] = [];
  for (const d of types) {
    const p = { namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: d.type.toLowerCase() };
    const cur = state.findSync(p);
    if (cur && cur.metadata.owner !== owner) {
      problems.push(`types: ${d.type} is defined already (by ${cur.metadata.owner || 'a user'})`);
      taken = true;
      continue;
    }
    const r: Resource = cur ? { ...copyResource(cur), spec: fillDefinition(d) } : newResource(p, fillDefinition(d));
    try {
      admission.check(r, cur ? 'update' : 'create');
    } catch (e) {
      problems.push(`types: ${(e as Error).message}`);
    }
    writes.push({ r, ...(cur ? { cur } : {}) });
  }
  // A type another holds may be let go of later: tried again then.
  if (problems.length) throw new ExtensionProblems(problems, !taken);
  // The namespace a type lives in is the extension's, as the type is: not the users' config, which a replace
  // would prune (admission would create it unowned).
  for (const ns of new Set(types.map((d) => d.defaultNamespace))) {
    const p = { namespace: META_NAMESPACE, type: NAMESPACE_TYPE, id: ns };
    if (state.findSync(p)) continue;
    await state.create(newResource(p, { description: `Created for extension ${name}.` }), { owner });
  }
  for (const { r, cur } of writes) {
    const stored = admission.admit(r, cur ? 'update' : 'create');
    if (!cur) await state.create(stored, { owner });
    else if (!sameSpec(cur.spec, stored.spec)) await state.update(stored, { owner });
  }
}
