// extension-manifest: what an extension says about itself in /manifest.yaml at the root of its
// squashfs: its name and version, the program to run inside its own root filesystem, the types it
// defines, the types it writes (the engine admits no other writes from it), and the capabilities
// and limits it runs with. Read by the engine before anything of the extension runs, so every
// problem is collected and named (the ExtensionStatus shows them), never thrown one at a time.
import YAML from 'yaml';
import { CAPABILITY, type CapabilityName } from '../../native/index.ts';
import type { DefinitionInput, PrintColumn, TypeAccess } from '../../cosi/meta/definition.ts';
import { typeNameProblem } from '../../cosi/meta/definition.ts';
import { checkSchema, type SpecSchema } from '../../cosi/meta/schema.ts';
import { parseSizeCondition } from './size-condition.ts';

/** Where the manifest is inside the extension's image. */
export const MANIFEST_PATH = '/manifest.yaml';

export interface ExtensionManifest {
  name: string;
  version: string;
  description: string;
  /** An absolute path inside the extension's root filesystem, run with `args`. */
  executable: string;
  args: string[];
  env: Record<string, string>;
  /** The types it defines, registered before it starts. */
  types: DefinitionInput[];
  /** The types it may write (create, update, destroy); finalizers it may put on anything it reads. */
  outputs: string[];
  /** The only capabilities it keeps; none unless named. */
  capabilities: CapabilityName[];
  /** Its cgroup's memory.max; undefined: no limit of its own. */
  memoryBytes?: number;
  /** Its cgroup's cpu.max as a percentage of one CPU; undefined: no limit of its own. */
  cpuPercent?: number;
}

export type ManifestResult =
  | { manifest: ExtensionManifest; problems: [] }
  | { manifest?: undefined; problems: string[] };

const KEYS = ['name', 'version', 'description', 'executable', 'args', 'env', 'types', 'outputs', 'capabilities',
  'memory', 'cpu'];
const TYPE_KEYS = ['type', 'defaultNamespace', 'aliases', 'printColumns', 'sensitive', 'schema', 'access'];
/** A plugin name: also its log source, its PluginStatus id and a path segment. */
export const EXTENSION_NAME_RE = /^[a-z][a-z0-9-]{0,62}$/;
const NAMESPACE_RE = /^[a-z][a-z0-9-]{0,62}$/;
const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The engine's variables (the plugin socket, host mode, own mounts, the addon's path): not an extension's. */
const RESERVED_ENV_RE = /^(COSI_|APPLIANCE_)/;
const VERSION_RE = /^[A-Za-z0-9][A-Za-z0-9.+_~-]{0,63}$/;
/**
 * Groups an extension may neither define types in nor write: the machine's own state (definitions,
 * namespaces, plugin statuses, power, upgrades, its trust). What it may write elsewhere is checked again
 * against the machine's types when it is admitted.
 */
const ENGINE_GROUPS_RE = /\.(cosi\.dev|runtime\.appliance\.dev|security\.appliance\.dev)$/;
const DEFINES_RE = /\.(cosi\.dev|appliance\.dev)$/;

/** Capabilities no extension gets: each would undo its confinement. */
const UNDOING = {
  CAP_SYS_ADMIN: 'not granted to extensions: it is nearly all of root (mounts, namespaces, devices)',
  CAP_SYS_PTRACE: 'not granted to extensions: it reaches into the machine\'s processes and, through them, its files',
  CAP_SYS_MODULE: 'not granted to extensions: kernel code runs with no confinement at all',
  CAP_SYS_BOOT: 'not granted to extensions: the machine is rebooted through its API (PowerRequest)',
} as const;

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function unknownKeys(v: Rec, known: readonly string[], where: string): string[] {
  return Object.keys(v).filter((k) => !known.includes(k))
    .map((k) => `${where}${k}: unknown key (known: ${known.join(', ')})`);
}

/** An absolute path without `.` or `..` segments: it names one file inside the extension's root. */
function pathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path inside the extension (e.g. /usr/bin/python3)';
  if (path.split('/').some((s) => s === '.' || s === '..')) return 'may not hold . or .. segments';
  if (path.includes('\0')) return 'may not hold a NUL byte';
  return undefined;
}

function typeOf(v: unknown, i: number, problems: string[]): DefinitionInput | undefined {
  const where = `types[${i}]`;
  if (!isRecord(v)) {
    problems.push(`${where}: want a mapping with type, defaultNamespace, ...`);
    return undefined;
  }
  const before = problems.length;
  problems.push(...unknownKeys(v, TYPE_KEYS, `${where}.`));
  const type = v.type;
  if (typeof type !== 'string') problems.push(`${where}.type: required, a type name such as Greetings.example.com`);
  else {
    const p = typeNameProblem(type)
      ?? (DEFINES_RE.test(type) ? 'the cosi.dev and appliance.dev groups are the machine\'s' : undefined);
    if (p) problems.push(`${where}.type "${type}": ${p}`);
  }
  const ns = v.defaultNamespace;
  if (typeof ns !== 'string' || !NAMESPACE_RE.test(ns)) {
    problems.push(`${where}.defaultNamespace: required, a lowercase name (letters, digits, dashes)`);
  }
  if (v.aliases !== undefined && !isStrings(v.aliases)) problems.push(`${where}.aliases: want a list of names`);
  const columns = v.printColumns;
  if (columns !== undefined && !(Array.isArray(columns) && columns.every((c) => isRecord(c)
    && typeof c.name === 'string' && typeof c.jsonPath === 'string'))) {
    problems.push(`${where}.printColumns: want a list of {name, jsonPath}`);
  }
  if (v.sensitive !== undefined && typeof v.sensitive !== 'boolean') {
    problems.push(`${where}.sensitive: want true or false`);
  }
  if (v.access !== undefined && v.access !== 'users' && v.access !== 'controllers') {
    problems.push(`${where}.access: users (people declare them) or controllers (only the extension writes them)`);
  }
  if (v.schema !== undefined) problems.push(...checkSchema(v.schema, `${where}.schema`));
  if (problems.length > before) return undefined;
  return {
    type: type as string, defaultNamespace: ns as string,
    ...(v.aliases ? { aliases: v.aliases as string[] } : {}),
    ...(columns ? { printColumns: columns as PrintColumn[] } : {}),
    ...(v.sensitive ? { sensitive: true } : {}),
    ...(v.schema ? { schema: v.schema as SpecSchema } : {}),
    ...(v.access ? { access: v.access as TypeAccess } : {}),
  };
}

/** The manifest in `text` (YAML), or every problem in it, each naming its key. */
export function parseManifest(text: string): ManifestResult {
  let v: unknown;
  try {
    v = YAML.parse(text);
  } catch (e) {
    return { problems: [`not YAML: ${(e as Error).message}`] };
  }
  if (!isRecord(v)) return { problems: ['want a mapping with name, version, executable, ...'] };
  const problems = unknownKeys(v, KEYS, '');
  const stringKey = (key: string, required: boolean) => {
    const x = v[key];
    if (x === undefined && !required) return '';
    if (typeof x !== 'string' || !x.trim()) {
      problems.push(`${key}: required, a non-empty string`);
      return '';
    }
    return x;
  };
  const name = stringKey('name', true);
  if (name && !EXTENSION_NAME_RE.test(name)) {
    problems.push(`name "${name}": lowercase letters, digits and dashes, at most 63`);
  }
  const version = stringKey('version', true);
  if (version && !VERSION_RE.test(version)) {
    problems.push(`version "${version}": letters, digits and . + _ ~ -, at most 64 (e.g. 1.2.0)`);
  }
  const description = stringKey('description', false);
  if (/[\n\r]/.test(description) || description.length > 200) problems.push('description: one line of at most 200');
  const executable = stringKey('executable', true);
  const exeProblem = executable ? pathProblem(executable) : undefined;
  if (exeProblem) problems.push(`executable "${executable}": ${exeProblem}`);
  if (v.args !== undefined && !isStrings(v.args)) problems.push('args: want a list of strings');
  const env = v.env ?? {};
  if (!isRecord(env) || !Object.values(env).every((x) => typeof x === 'string')) {
    problems.push('env: want a mapping of names to strings');
  } else {
    for (const k of Object.keys(env)) {
      if (!ENV_RE.test(k)) problems.push(`env.${k}: not a variable name`);
      if (RESERVED_ENV_RE.test(k)) problems.push(`env.${k}: COSI_ and APPLIANCE_ variables are the engine's`);
    }
  }
  if (v.types !== undefined && !Array.isArray(v.types)) problems.push('types: want a list');
  const types = (Array.isArray(v.types) ? v.types : []).map((t, i) => typeOf(t, i, problems));
  const defined = types.filter((t): t is DefinitionInput => !!t).map((t) => t.type);
  if (new Set(defined).size !== defined.length) problems.push('types: a type is defined twice');
  const outputs = v.outputs ?? [];
  if (!isStrings(outputs)) problems.push('outputs: want a list of type names');
  else {
    for (const o of outputs) {
      const p = typeNameProblem(o) ?? (ENGINE_GROUPS_RE.test(o) ? 'the machine\'s own state is written by the '
        + 'engine only' : undefined);
      if (p) problems.push(`outputs: "${o}": ${p}`);
    }
  }
  const caps = v.capabilities ?? [];
  if (!isStrings(caps)) problems.push('capabilities: want a list such as [CAP_NET_ADMIN]');
  else {
    const grantable = Object.keys(CAPABILITY).filter((c) => !Object.hasOwn(UNDOING, c));
    for (const c of caps) {
      if (Object.hasOwn(UNDOING, c)) problems.push(`capabilities: ${c}: ${UNDOING[c as keyof typeof UNDOING]}`);
      else if (!Object.hasOwn(CAPABILITY, c)) {
        problems.push(`capabilities: "${c}" is not one the engine grants (${grantable.join(', ')})`);
      }
    }
  }
  let memoryBytes: number | undefined;
  if (v.memory !== undefined) {
    const size = typeof v.memory === 'string' ? parseSizeCondition(v.memory) : new Error('want a size');
    if (size instanceof Error || size.op !== '==' || size.bytes < 4 << 20 || size.bytes > 2 ** 50) {
      problems.push(`memory "${String(v.memory)}": want a size from 4MiB to 1PiB, such as 64MiB`);
    } else memoryBytes = size.bytes;
  }
  let cpuPercent: number | undefined;
  if (v.cpu !== undefined) {
    const m = typeof v.cpu === 'string' ? /^([0-9]{1,4})%$/.exec(v.cpu) : null;
    if (!m || Number(m[1]) < 1) problems.push(`cpu "${String(v.cpu)}": want a percentage of one CPU, such as 50%`);
    else cpuPercent = Number(m[1]);
  }
  if (problems.length) return { problems };
  return {
    problems: [],
    manifest: {
      name, version, description, executable, args: (v.args as string[] | undefined) ?? [],
      env: env as Record<string, string>, types: types as DefinitionInput[], outputs: outputs as string[],
      capabilities: caps as CapabilityName[],
      ...(memoryBytes !== undefined ? { memoryBytes } : {}), ...(cpuPercent !== undefined ? { cpuPercent } : {}),
    },
  };
}
