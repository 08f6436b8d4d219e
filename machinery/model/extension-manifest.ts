// extension-manifest: what an extension says about itself in /manifest.yaml at the root of its
// squashfs: its name and version, the program to run inside its own root filesystem, the types it
// defines, the types it writes (the engine admits no other writes from it), and the capabilities
// and limits it runs with. Read by the engine before anything of the extension runs, so every
// problem is collected and named (the ExtensionStatus shows them), never thrown one at a time.
import YAML from 'yaml';
import { CAPABILITY, type CapabilityName } from '../../native/index.ts';
import type { DefinitionInput, PrintColumn, TypeAccess } from '../../cosi/meta/definition.ts';
import { typeNameProblem } from '../../cosi/meta/definition.ts';
import { checkSchema, validateSpec, type SpecSchema } from '../../cosi/meta/schema.ts';
import { parseSizeCondition } from './size-condition.ts';
import { EXTENSION_DEVICES, EXTENSION_MOUNT_POINTS } from '../sys/extension-root.ts';

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
  /** When it counts as running (ReadyCheck); a COSI plugin's ready line unless the manifest says otherwise. */
  ready: ReadyCheck;
  /** Where the program starts, inside its root; '/' unless the manifest says otherwise. */
  workingDir: string;
  /** Its persistent directories, each mounted on a directory of its image. */
  volumes: Volume[];
  /** The machine is not healthy unless it runs: an upgrade on trial whose critical extension fails rolls back. */
  critical: boolean;
  /** What must be so before it starts: `network` configured, `time` synced, another extension running (by name). */
  after: string[];
  /** Device nodes of the machine's it needs in its /dev (character devices; the ExtensionSpec must grant each). */
  devices: string[];
}

/** A device path an extension may ask for (the ExtensionSpec's `devices` rule says the same). */
export const DEVICE_PATH_RE = /^\/dev\/[A-Za-z0-9._+-]+(\/[A-Za-z0-9._+:-]+)*$/;

/** A critical extension restarted this many times since it started is failing, whatever it does now. */
export const CRITICAL_RESTARTS = 3;

/** A critical extension crash-looping (restarted CRITICAL_RESTARTS times): health fails it, a trial ends on it. */
export const crashLooping = (e: { critical: boolean; restarts: number }) =>
  e.critical && e.restarts >= CRITICAL_RESTARTS;

/** Put on an ExtensionSpec before it is deleted (`cosictl delete extensionspec NAME --purge-volumes`): volumes go. */
export const PURGE_VOLUMES_ANNOTATION = 'extensions.appliance.dev/purge-volumes';

/**
 * A named directory of an extension's that outlives its process, a reboot, an upgrade and a new image: kept on the
 * machine's disk (/var/lib/extensions/NAME/VOLUME), owned by the extension's uid, mounted on `path` in its root.
 */
export interface Volume {
  name: string;
  /** An absolute path inside the extension's root: a directory of its image (image builds make it). */
  path: string;
  /** The most its files may take (ext4 project quota); undefined: no limit of its own. */
  sizeBytes?: number;
}

/**
 * When a supervised process counts as running: `plugin`, once it prints the plugin ready line (a COSI
 * plugin); `started`, as soon as it runs (a program that says nothing, such as a web server); `tcp`, once a
 * connection to the port on the machine's loopback is accepted; `http`, once a GET of the path answers 2xx/3xx.
 */
export type ReadyCheck =
  | { kind: 'plugin' } | { kind: 'started' } | { kind: 'tcp'; port: number }
  | { kind: 'http'; port: number; path: string };

/** A check as the manifest writes it (tcp:8080, http:8080/health). */
export const readyWords = (c: ReadyCheck): string =>
  (c.kind === 'tcp' ? `tcp:${c.port}` : c.kind === 'http' ? `http:${c.port}${c.path}` : c.kind);

/** The manifest's `ready:` words. */
const READY_RE = /^(plugin|started|tcp:[0-9]{1,5}|http:[0-9]{1,5}(\/[!-~]*)?)$/;

/** A `ready:` value as a check, or the reason it is not one. */
export function parseReady(text: string): ReadyCheck | string {
  if (text === 'plugin' || text === 'started') return { kind: text };
  const m = READY_RE.test(text) ? /^(tcp|http):([0-9]{1,5})(\/[!-~]*)?$/.exec(text) : null;
  const port = Number(m?.[2]);
  if (!m || port < 1 || port > 65535) return 'want plugin, started, tcp:PORT or http:PORT/PATH (a port 1-65535)';
  return m[1] === 'tcp' ? { kind: 'tcp', port } : { kind: 'http', port, path: m[3] ?? '/' };
}

export type ManifestResult =
  | { manifest: ExtensionManifest; problems: [] }
  | { manifest?: undefined; problems: string[] };

/** A plugin name: also its log source, its PluginStatus id and a path segment. */
export const EXTENSION_NAME_RE = /^[a-z][a-z0-9-]{0,62}$/;
const NAMESPACE_RE = /^[a-z][a-z0-9-]{0,62}$/;
export const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The engine's variables (the plugin socket, host mode, own mounts, the addon's path): not an extension's. */
export const RESERVED_ENV_RE = /^(COSI_|APPLIANCE_)/;
const VERSION_RE = /^[A-Za-z0-9][A-Za-z0-9.+_~-]{0,63}$/;
/** A volume's name: a directory's name on the machine. */
const VOLUME_NAME_RE = /^[a-z][a-z0-9-]{0,62}$/;
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

const words = (description: string, pattern: RegExp, patternHelp: string): SpecSchema =>
  ({ type: 'string', description, pattern: pattern.source, patternHelp });
const strings = (description: string): SpecSchema => ({ type: 'array', description, items: { type: 'string' } });

/**
 * The manifest's shape: its keys, their types, patterns and bounds. The one source for checking a manifest (below,
 * with what a shape cannot say: reserved names, paths, capabilities, sizes) and for the JSON Schema editors get.
 */
export const MANIFEST_SCHEMA: SpecSchema = {
  type: 'object',
  description: 'What an extension says about itself (/manifest.yaml at the root of its image).',
  required: ['name', 'version', 'executable'],
  properties: {
    name: words('Its name: also its log source, its PluginStatus id and a path segment.', EXTENSION_NAME_RE,
      'lowercase letters, digits and dashes, at most 63'),
    version: words('Its version.', VERSION_RE, 'letters, digits and . + _ ~ -, at most 64 (e.g. 1.2.0)'),
    description: words('One line saying what it does.', /^[^\n\r]{0,200}$/, 'one line of at most 200'),
    executable: { type: 'string', minLength: 1,
      description: 'An absolute path inside its root filesystem: the program run, with args.' },
    args: strings('The program\'s arguments.'),
    env: { type: 'object', description: 'Variables the program gets.', additionalProperties: { type: 'string' } },
    types: {
      type: 'array', description: 'The types it defines, registered before it starts.',
      items: {
        type: 'object', required: ['type', 'defaultNamespace'],
        properties: {
          type: { type: 'string', description: 'The type\'s full name, plural first (Greetings.example.com).' },
          defaultNamespace: words('Where its resources live unless a writer says otherwise.', NAMESPACE_RE,
            'a lowercase name (letters, digits, dashes)'),
          aliases: strings('Other names people may type.'),
          printColumns: {
            type: 'array', description: 'The columns `get` prints.',
            items: {
              type: 'object', required: ['name', 'jsonPath'],
              properties: { name: { type: 'string' }, jsonPath: { type: 'string' } },
            },
          },
          sensitive: { type: 'boolean', description: 'Its specs are secrets: only admins read them.' },
          schema: { type: 'any', description: 'The spec\'s schema (a JSON Schema subset).' },
          access: { type: 'string', enum: ['users', 'controllers'],
            description: 'users: people declare them; controllers: only the extension writes them.' },
        },
      },
    },
    outputs: strings('The types it may write; the engine admits no other writes from it.'),
    capabilities: strings('The only capabilities it keeps, such as CAP_NET_BIND_SERVICE; none unless named.'),
    memory: { type: 'string', description: 'Its cgroup\'s memory.max, such as 64MiB.' },
    cpu: words('Its cgroup\'s cpu.max as a percentage of one CPU, such as 50%.', /^[0-9]{1,4}%$/,
      'a percentage of one CPU, such as 50%'),
    ready: words('When it counts as running: plugin (it prints the COSI plugin ready line; the default), started '
      + '(once it runs), tcp:PORT (a connection to the port on loopback is accepted), http:PORT/PATH (a GET answers '
      + '2xx or 3xx).', READY_RE, 'plugin, started, tcp:PORT or http:PORT/PATH'),
    workingDir: { type: 'string', minLength: 1,
      description: 'An absolute path inside its root filesystem where the program starts; / by default.' },
    after: {
      type: 'array',
      description: 'What must be so before it starts: network (every configured link has its addresses), '
        + 'time (the clock synced, when time servers are configured), or another extension\'s name (it runs).',
      items: words('network, time or an extension\'s name.', EXTENSION_NAME_RE,
        'network, time or an extension\'s name'),
    },
    devices: {
      type: 'array', description: 'Device nodes of the machine\'s it needs in its /dev, such as /dev/ttyS1 (character '
        + 'devices only): it starts only when its ExtensionSpec\'s devices grant each (an admin\'s declaration).',
      items: words('A path under /dev.', DEVICE_PATH_RE, 'a path under /dev, such as /dev/ttyS1'),
    },
    critical: {
      type: 'boolean', description: 'The machine is not healthy unless it runs: an upgrade on trial is rolled back '
        + `when it is not running within the trial's health timeout, or restarts ${CRITICAL_RESTARTS} times in it.`,
    },
    volumes: {
      type: 'array',
      description: 'Persistent directories, kept on the machine\'s disk (/var/lib/extensions/NAME/VOLUME) '
        + 'across restarts, reboots, upgrades and new images; removed only by `cosictl delete extensionspec NAME '
        + '--purge-volumes`.',
      items: {
        type: 'object', required: ['name', 'path'],
        properties: {
          name: words('The volume\'s name.', VOLUME_NAME_RE, 'lowercase letters, digits and dashes, at most 63'),
          path: { type: 'string', minLength: 1, description: 'Where the program sees it: an absolute path inside its '
            + 'root (an image build makes the directory).' },
          size: { type: 'string', description: 'The most its files may take, such as 100MiB (ext4 project quota).' },
        },
      },
    },
  },
};

/** An absolute path without `.` or `..` segments: it names one file inside the extension's root. */
function pathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path inside the extension (e.g. /usr/bin/python3)';
  if (path.split('/').some((s) => s === '.' || s === '..')) return 'may not hold . or .. segments';
  if (path.includes('\0')) return 'may not hold a NUL byte';
  return undefined;
}

/** What the schema cannot say about a type an extension defines. */
function typeProblems(t: Rec, where: string): string[] {
  const problems: string[] = [];
  const type = t.type as string;
  const p = typeNameProblem(type)
    ?? (DEFINES_RE.test(type) ? 'the cosi.dev and appliance.dev groups are the machine\'s' : undefined);
  if (p) problems.push(`${where}.type "${type}": ${p}`);
  if (t.schema !== undefined) problems.push(...checkSchema(t.schema, `${where}.schema`));
  return problems;
}

/** The manifest in `text` (YAML), or every problem in it, each naming its key. */
export function parseManifest(text: string): ManifestResult {
  let v: unknown;
  try {
    v = YAML.parse(text);
  } catch (e) {
    return { problems: [`not YAML: ${(e as Error).message}`] };
  }
  return checkManifest(v);
}

/**
 * A manifest's fields as a value (from manifest.yaml, or an extension of an appliance definition: `path` then
 * prefixes each problem), or every problem with them.
 */
export function checkManifest(v: unknown, path = ''): ManifestResult {
  if (!isRecord(v)) {
    return { problems: [`${path ? `${path}: ` : ''}want a mapping with name, version, executable, ...`] };
  }
  const at = (key: string) => (path ? `${path}.${key}` : key);
  // validateSpec names fields under a root; ours has none when the manifest stands alone.
  const problems = validateSpec(MANIFEST_SCHEMA, v, path || '.').map((p) => (path ? p : p.replace(/^\.\.?/, '')));
  // What a shape cannot say is checked on every part whose shape is right: all problems at once.
  const shaped = (key: string) => !problems.some((p) => [':', '.', '['].some((c) => p.startsWith(`${at(key)}${c}`)));
  const m = v as {
    name: string; version: string; description?: string; executable: string; args?: string[];
    env?: Record<string, string>; types?: Rec[]; outputs?: string[]; capabilities?: string[]; memory?: string;
    cpu?: string; ready?: string; workingDir?: string; volumes?: { name: string; path: string; size?: string }[];
    critical?: boolean; after?: string[]; devices?: string[];
  };
  const exeProblem = shaped('executable') ? pathProblem(m.executable) : undefined;
  if (exeProblem) problems.push(`${at('executable')} "${m.executable}": ${exeProblem}`);
  const dirProblem = m.workingDir !== undefined && shaped('workingDir') ? pathProblem(m.workingDir) : undefined;
  if (dirProblem) problems.push(`${at('workingDir')} "${m.workingDir}": ${dirProblem}`);
  const ready = m.ready !== undefined && shaped('ready') ? parseReady(m.ready) : { kind: 'plugin' as const };
  if (typeof ready === 'string') problems.push(`${at('ready')} "${m.ready}": ${ready}`);
  for (const k of shaped('env') ? Object.keys(m.env ?? {}) : []) {
    if (!ENV_RE.test(k)) problems.push(`${at('env')}.${k}: not a variable name`);
    if (RESERVED_ENV_RE.test(k)) problems.push(`${at('env')}.${k}: COSI_ and APPLIANCE_ variables are the engine's`);
  }
  const types = Array.isArray(m.types) ? m.types : [];
  const named = types.filter((t): t is Rec & { type: string } => isRecord(t) && typeof t.type === 'string');
  types.forEach((t, i) => {
    if (named.includes(t as Rec & { type: string })) problems.push(...typeProblems(t, `${at('types')}[${i}]`));
  });
  const defined = named.map((t) => t.type);
  if (new Set(defined).size !== defined.length) problems.push(`${at('types')}: a type is defined twice`);
  for (const o of shaped('outputs') ? m.outputs ?? [] : []) {
    const p = typeNameProblem(o) ?? (ENGINE_GROUPS_RE.test(o) ? 'the machine\'s own state is written by the '
      + 'engine only' : undefined);
    if (p) problems.push(`${at('outputs')}: "${o}": ${p}`);
  }
  const grantable = Object.keys(CAPABILITY).filter((c) => !Object.hasOwn(UNDOING, c));
  for (const c of shaped('capabilities') ? m.capabilities ?? [] : []) {
    if (Object.hasOwn(UNDOING, c)) problems.push(`${at('capabilities')}: ${c}: ${UNDOING[c as keyof typeof UNDOING]}`);
    else if (!Object.hasOwn(CAPABILITY, c)) {
      problems.push(`${at('capabilities')}: "${c}" is not one the engine grants (${grantable.join(', ')})`);
    }
  }
  let memoryBytes: number | undefined;
  if (m.memory !== undefined && shaped('memory')) {
    const size = parseSizeCondition(m.memory);
    if (size instanceof Error || size.op !== '==' || size.bytes < 4 << 20 || size.bytes > 2 ** 50) {
      problems.push(`${at('memory')} "${m.memory}": want a size from 4MiB to 1PiB, such as 64MiB`);
    } else memoryBytes = size.bytes;
  }
  const cpuPercent = m.cpu === undefined || !shaped('cpu') ? undefined : Number(m.cpu.slice(0, -1));
  if (cpuPercent === 0) problems.push(`${at('cpu')} "${m.cpu}": want a percentage of one CPU, such as 50%`);
  const volumes = shaped('volumes') ? volumesOf(m.volumes ?? [], at('volumes'), problems) : [];
  const after = shaped('after') ? m.after ?? [] : [];
  const devices = shaped('devices') ? m.devices ?? [] : [];
  for (const d of devices) {
    if (d.split('/').includes('..')) problems.push(`${at('devices')}: "${d}" may not hold .. segments`);
    else if (EXTENSION_DEVICES.some((own) => d === `/dev/${own}`)) {
      problems.push(`${at('devices')}: "${d}" is in every extension's /dev already`);
    }
  }
  if (new Set(devices).size !== devices.length) problems.push(`${at('devices')}: a device is given twice`);
  if (new Set(after).size !== after.length) problems.push(`${at('after')}: a name is given twice`);
  if (typeof m.name === 'string' && after.includes(m.name)) {
    problems.push(`${at('after')}: "${m.name}" is the extension itself`);
  }
  if (problems.length || typeof ready === 'string') return { problems };
  return {
    problems: [],
    manifest: {
      name: m.name, version: m.version, description: m.description ?? '', executable: m.executable,
      args: m.args ?? [], env: m.env ?? {}, types: types.map(definitionOf), outputs: m.outputs ?? [],
      capabilities: (m.capabilities ?? []) as CapabilityName[],
      ...(memoryBytes !== undefined ? { memoryBytes } : {}), ...(cpuPercent !== undefined ? { cpuPercent } : {}),
      ready, workingDir: m.workingDir ?? '/', volumes, critical: m.critical ?? false, after, devices,
    },
  };
}

/** The volumes as the engine takes them, each problem pushed onto `problems` naming its key. */
function volumesOf(
  given: { name: string; path: string; size?: string }[], where: string, problems: string[],
): Volume[] {
  const names = new Set<string>();
  const paths: string[] = [];
  return given.map((v, i) => {
    const at = `${where}[${i}]`;
    if (names.has(v.name)) problems.push(`${at}.name "${v.name}": another volume has that name`);
    names.add(v.name);
    const path = v.path.replace(/(.)\/+$/, '$1');
    const bad = pathProblem(path)
      ?? (path === '/' ? 'is the root: a volume is mounted on a directory in it' : undefined)
      ?? (EXTENSION_MOUNT_POINTS.some((p) => path === p || path.startsWith(`${p}/`))
        ? `is under ${EXTENSION_MOUNT_POINTS.join(', ')}, which the launcher mounts` : undefined)
      ?? (paths.some((p) => p === path || path.startsWith(`${p}/`) || p.startsWith(`${path}/`))
        ? 'is, holds or lies in another volume\'s path' : undefined);
    if (bad) problems.push(`${at}.path "${v.path}": ${bad}`);
    paths.push(path);
    let sizeBytes: number | undefined;
    if (v.size !== undefined) {
      const size = parseSizeCondition(v.size);
      if (size instanceof Error || size.op !== '==' || size.bytes < 1 << 20 || size.bytes > 2 ** 50) {
        problems.push(`${at}.size "${v.size}": want a size from 1MiB to 1PiB, such as 100MiB`);
      } else sizeBytes = size.bytes;
    }
    return { name: v.name, path, ...(sizeBytes !== undefined ? { sizeBytes } : {}) };
  });
}

/** A defined type as the engine registers it (only the keys given). */
function definitionOf(t: Rec): DefinitionInput {
  return {
    type: t.type as string, defaultNamespace: t.defaultNamespace as string,
    ...(t.aliases ? { aliases: t.aliases as string[] } : {}),
    ...(t.printColumns ? { printColumns: t.printColumns as PrintColumn[] } : {}),
    ...(t.sensitive ? { sensitive: true } : {}),
    ...(t.schema ? { schema: t.schema as SpecSchema } : {}),
    ...(t.access ? { access: t.access as TypeAccess } : {}),
  };
}
