// definition: an appliance declared in one file, appliance.yaml: its name and version, its extensions (each from a
// dir: root filesystem with manifest fields, an oci: image, or a prebuilt squashfs:), the machine config it boots
// with (documents by path or inline; secrets only by path, in secrets:), its kernel's arguments and extra modules,
// the key that signs its upgrades and its default formats. Checked as a whole before anything is built: every
// problem with its field and reason. Its shape is one schema (DEFINITION_SCHEMA), which the spec validator checks and
// from which editors get their JSON Schema; what a shape cannot say is checked here against the files it names,
// the built-in plugins and types, and the machine's own config validation (the same as `cosictl validate`).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { validateSpec, type SpecSchema } from '../../cosi/meta/schema.ts';
import { placeOf, splitDocuments } from '../../machinery/config/documents.ts';
import { parseYaml } from '../../machinery/config/safe-yaml.ts';
import { apiCaDocument, secretsFromYaml } from '../../machinery/pki/secrets.ts';
import { MODULE_NAME_RE } from '../../machinery/disk/slot-payload.ts';
import { parseOciReference } from '../../machinery/oci/registry.ts';
import {
  ConfigRefused, offlineValidationContext, validateConfig,
} from '../../machinery/config/validate-config.ts';
import {
  checkManifest, MANIFEST_SCHEMA, parseManifest, type ExtensionManifest,
} from '../../machinery/model/extension-manifest.ts';
import { BUILTIN_NAMESPACES, BUILTIN_TYPES } from '../../proto/gen/builtin-types.ts';
import { EXTENSION_TYPE, UPDATE_POLICY_TYPE } from '../../proto/gen/resource-types.ts';
import { PLUGINS } from '../../plugins/index.ts';
import { FORMATS } from '../formats/index.ts';
import type { DefinedExtension, ExtensionSource } from './defined-extension.ts';
import { ExtensionRefused, squashfsManifest } from './extension-build.ts';

export type { DefinedExtension, ExtensionSource } from './defined-extension.ts';

export const DEFINITION_API_VERSION = 'appliance.dev/v1alpha1';
export const DEFINITION_KIND = 'Appliance';

/** A `run.forward` entry: HOSTPORT:GUESTPORT. */
const FORWARD_RE = /^([0-9]{1,5}):([0-9]{1,5})$/;

const manifestFields = (MANIFEST_SCHEMA as { properties: Record<string, SpecSchema> }).properties;
const path = (description: string): SpecSchema => ({ type: 'string', minLength: 1, description });
const names = (description: string): SpecSchema => ({ type: 'array', description, items: { type: 'string' } });

/** The definition's shape: the one source for checking it and for the JSON Schema editors get. */
export const DEFINITION_SCHEMA: SpecSchema = {
  type: 'object',
  description: 'An appliance: what its images hold and the machine config it boots with.',
  required: ['apiVersion', 'kind', 'name', 'version'],
  properties: {
    apiVersion: { type: 'string', enum: [DEFINITION_API_VERSION] },
    kind: { type: 'string', enum: [DEFINITION_KIND] },
    name: { ...manifestFields.name!, description: 'The appliance\'s name: its images and bundles are named after it.' },
    version: { ...manifestFields.version!, description: 'Its version: what upgrades compare.' },
    extensions: {
      type: 'array', description: 'Programs baked into every image, started at first boot.',
      items: {
        type: 'object', required: ['name'],
        description: 'One of dir, oci or squashfs; with dir, the manifest\'s fields (executable, args, ...).',
        properties: {
          dir: path('A directory: the extension\'s root filesystem (relative to this file).'),
          oci: path('An OCI image layout directory, a `docker save` archive, or an image in a registry by digest '
            + '(oci://HOST[:PORT]/REPOSITORY@sha256:...), pulled when the appliance is built.'),
          squashfs: path('A prebuilt extension image, its manifest inside.'),
          ...manifestFields,
          version: { ...manifestFields.version!, description: 'Its version; default: the appliance\'s.' },
        },
      },
    },
    config: {
      type: 'array', description: 'The machine config the appliance boots with, in order.',
      items: {
        type: 'object', description: 'A file of resource documents, or documents written here.',
        properties: {
          path: path('A file of resource documents (YAML), relative to this file.'),
          inline: { type: 'string', description: 'Resource documents written here; no secrets (use secrets:).' },
        },
      },
    },
    secrets: path('The machine\'s secrets (`cosictl gen secrets`): a file kept out of this one.'),
    registryCA: path('A PEM file of CAs trusted, beside the system\'s roots, for the HTTPS of the registries oci:// '
      + 'images are pulled from (a private registry\'s own CA).'),
    kernel: {
      type: 'object',
      properties: {
        args: names('Kernel command line arguments added to ours.'),
        modules: {
          type: 'array', description: 'Modules of the kernel build (the system\'s, or with the fragment, the '
            + 'appliance\'s) loaded at every boot.',
          items: { type: 'string', pattern: MODULE_NAME_RE.source, patternHelp: 'a module name (letters, digits, _ '
            + 'and -)' },
        },
        fragment: path('A kernel config fragment (CONFIG_X=y|m lines) put on top of the system kernel\'s config: '
          + 'the appliance gets its own kernel, compiled once and cached by its inputs. It may add options, not '
          + 'change one the system sets.'),
      },
    },
    signing: {
      type: 'object', required: ['key'],
      properties: { key: path('The Ed25519 private key (PKCS#8 PEM) its upgrade bundles are signed with.') },
    },
    updates: {
      type: 'object', required: ['root', 'url'],
      description: 'Where its machines pull upgrades from: a TUF repository `appliance release` publishes. The image '
        + 'boots with an UpdatePolicy (id "appliance") pinning this root.',
      properties: {
        root: path('A root.json of the repository (`appliance release init` prints it): the first root its machines '
          + 'trust; later ones are taken as TUF rotates keys.'),
        url: { type: 'string', pattern: '^https?://[^\\s]+$', patternHelp: 'an http:// or https:// URL',
          description: 'Where the repository is served (metadata/ and targets/ under it).' },
        channel: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$', patternHelp: 'lower-case letters, digits '
          + 'and -', description: 'The channel its machines follow (default stable).' },
        window: { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-3]):[0-5][0-9]$',
          patternHelp: 'HH:MM-HH:MM (UTC)', description: 'When upgrades may start (UTC); default: any time.' },
      },
    },
    formats: {
      type: 'array', description: 'What `appliance build` writes unless told otherwise.',
      items: { type: 'string', enum: FORMATS.map((f) => f.name) },
    },
    run: {
      type: 'object', description: 'How `appliance run` boots it in QEMU on this computer.',
      properties: {
        forward: {
          type: 'array', description: 'Ports of this computer\'s 127.0.0.1 forwarded to the machine\'s.',
          items: { type: 'string', pattern: FORWARD_RE.source, patternHelp: 'HOSTPORT:GUESTPORT, e.g. 8080:8080' },
        },
        memory: { type: 'integer', minimum: 128, maximum: 65536, description: 'The machine\'s memory in MiB.' },
      },
    },
  },
};

export interface ApplianceDefinition {
  file: string;
  name: string;
  version: string;
  extensions: DefinedExtension[];
  /** The machine config's text: its `config:` parts in order, then the secrets file (each part named in messages). */
  config: { text: string; parts: { name: string; documents: number }[] };
  /** The secrets file; apiSecrets: a `cosictl gen secrets` file (its clients' certificates reach the machine). */
  secrets?: { file: string; apiSecrets: boolean };
  kernel: { args: string[]; modules: string[]; fragment?: string };
  signingKey?: string;
  /** CAs (PEM file) trusted beside the system's for registries' HTTPS. */
  registryCA?: string;
  formats: string[];
  /** Where its machines pull upgrades from (the UpdatePolicy its config carries). */
  updates?: { url: string; channel: string };
  /** `appliance run`'s forwards (this computer's port to the machine's) and memory. */
  run: { forward: { hostPort: number; guestPort: number }[]; memoryMiB: number };
}

/** `appliance run`'s memory unless the definition says. */
export const RUN_MEMORY_MIB = 512;

export type DefinitionResult =
  | { definition: ApplianceDefinition; problems: [] }
  | { definition?: undefined; problems: string[] };

type Rec = Record<string, unknown>;
const SOURCES = ['dir', 'oci', 'squashfs'] as const;

/** Reads and checks the definition in `file`; every problem at once, each with its field. */
export async function loadDefinition(file: string): Promise<DefinitionResult> {
  if (!existsSync(file)) return { problems: [`${file}: no such file`] };
  const parsed = parseYaml(readFileSync(file, 'utf8'));
  if (!parsed.ok) {
    const at = parsed.at ? ` (line ${parsed.at.line}, column ${parsed.at.col})` : '';
    return { problems: [`${file}: not YAML${at}: ${parsed.message}`] };
  }
  const v = parsed.value;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return { problems: [`${file}: want a mapping with apiVersion, kind, name, version, ...`] };
  }
  const problems = validateSpec(DEFINITION_SCHEMA, v, '').map((p) => p.replace(/^\./, ''));
  if (problems.length) return { problems };
  const d = v as Rec & { name: string; version: string; extensions?: Rec[]; config?: Rec[]; secrets?: string;
    registryCA?: string;
    kernel?: { args?: string[]; modules?: string[]; fragment?: string }; signing?: { key: string };
    formats?: string[]; run?: { forward?: string[]; memory?: number };
    updates?: { root: string; url: string; channel?: string; window?: string } };
  const base = dirname(resolve(file));
  const at = (p: string) => (isAbsolute(p) ? p : join(base, p));
  const want = (field: string, p: string, kind: 'file' | 'directory' | 'any') => {
    const full = at(p);
    if (!existsSync(full)) problems.push(`${field}: ${p}: no such file or directory`);
    else if (kind === 'file' && !statSync(full).isFile()) problems.push(`${field}: ${p}: not a file`);
    else if (kind === 'directory' && !statSync(full).isDirectory()) problems.push(`${field}: ${p}: not a directory`);
    return full;
  };

  const builtinPlugins = new Set(PLUGINS.map((p) => p.name));
  const seen = new Map<string, number>();
  const extensions: DefinedExtension[] = (d.extensions ?? []).map((e, i) => {
    const where = `extensions[${i}]`;
    const name = e.name as string;
    if (seen.has(name)) problems.push(`${where}.name: "${name}" is extensions[${seen.get(name)}]'s name too`);
    seen.set(name, i);
    if (builtinPlugins.has(name)) problems.push(`${where}.name: "${name}" is a built-in plugin's name`);
    const given = SOURCES.filter((s) => e[s] !== undefined);
    if (given.length !== 1) {
      problems.push(`${where}: want one of dir, oci or squashfs${given.length ? `, not ${given.join(' and ')}` : ''}`);
    }
    const fields = Object.fromEntries(Object.entries(e).filter(([k]) => !(SOURCES as readonly string[]).includes(k)));
    const kind = given[0];
    let source: ExtensionSource = { dir: '' };
    let manifest: ExtensionManifest | undefined;
    if (kind === 'squashfs') {
      source = { squashfs: want(`${where}.squashfs`, e.squashfs as string, 'file') };
      const extra = Object.keys(fields).filter((k) => k !== 'name');
      if (extra.length) problems.push(`${where}: ${extra.join(', ')}: a prebuilt image carries its own manifest`);
      // Its manifest read now: the config may name the types it defines.
      if (existsSync(source.squashfs) && statSync(source.squashfs).isFile()) {
        try {
          manifest = parseManifest(squashfsManifest(name, source.squashfs)).manifest;
        } catch (err) {
          problems.push(...(err instanceof ExtensionRefused ? err.problems : [(err as Error).message])
            .map((m) => `${where}.squashfs: ${m}`));
        }
      }
    } else if (kind === 'oci' && (e.oci as string).startsWith('oci://')) {
      const ref = parseOciReference(e.oci as string);
      if (typeof ref === 'string') problems.push(`${where}.oci: ${ref}`);
      source = { registry: e.oci as string };
    } else if (kind === 'oci') {
      source = { oci: want(`${where}.oci`, e.oci as string, 'any') };
    } else if (kind === 'dir') {
      source = { dir: want(`${where}.dir`, e.dir as string, 'directory') };
      const r = checkManifest({ version: d.version, ...fields }, where);
      problems.push(...r.problems);
      manifest = r.manifest;
    }
    return { name, source, fields, ...(manifest ? { manifest } : {}) };
  });

  const parts: { name: string; documents: number; text: string; inline: boolean }[] = [];
  (d.config ?? []).forEach((c, i) => {
    const where = `config[${i}]`;
    if ((c.path === undefined) === (c.inline === undefined)) {
      problems.push(`${where}: want one of path or inline`);
      return;
    }
    const text = c.path !== undefined ? readIf(want(`${where}.path`, c.path as string, 'file')) : c.inline as string;
    const name = c.path !== undefined ? `${where} (${c.path as string})` : `${where} (inline)`;
    parts.push({ name, documents: splitDocuments(text).length, text, inline: c.inline !== undefined });
  });
  const secrets = d.secrets === undefined ? undefined : want('secrets', d.secrets, 'file');
  // The secrets are config documents too (the API's CA, ...): checked with the rest, and carried after it. A file
  // of `cosictl gen secrets` is carried as the one document the machine needs of it, its CA (not the clients' keys).
  let apiSecrets = false;
  if (secrets) {
    let text = readIf(secrets);
    const parsed = parseYaml(text);
    const doc = parsed.ok ? parsed.value as Rec | null : null;
    if (doc && typeof doc === 'object' && doc.version === 'v1alpha1' && 'ca' in doc) {
      try {
        text = apiCaDocument(secretsFromYaml(text, d.secrets!));
        apiSecrets = true;
      } catch (e) {
        problems.push(`secrets: ${(e as Error).message}`);
      }
    }
    parts.push({ name: `secrets (${d.secrets})`, documents: splitDocuments(text).length, text, inline: false });
  }
  if (d.updates) {
    const root = rootJson(want('updates.root', d.updates.root, 'file'), problems);
    if (root) {
      const policy = { urls: [d.updates.url], channel: d.updates.channel ?? 'stable', root,
        ...(d.updates.window ? { window: d.updates.window } : {}) };
      parts.push({ name: 'updates', documents: 1, inline: false,
        text: `metadata: {type: ${UPDATE_POLICY_TYPE}, id: appliance}\nspec: ${JSON.stringify(policy)}\n` });
    }
  }
  const fragment = d.kernel?.fragment === undefined ? undefined : want('kernel.fragment', d.kernel.fragment, 'file');
  const signingKey = d.signing === undefined ? undefined : want('signing.key', d.signing.key, 'file');
  const registryCA = d.registryCA === undefined ? undefined : want('registryCA', d.registryCA as string, 'file');
  const forward = (d.run?.forward ?? []).map((f, i) => {
    const [hostPort, guestPort] = FORWARD_RE.exec(f)!.slice(1).map(Number) as [number, number];
    if (!(hostPort >= 1 && hostPort <= 65535 && guestPort >= 1 && guestPort <= 65535)) {
      problems.push(`run.forward[${i}]: "${f}": ports are 1-65535`);
    }
    return { hostPort, guestPort };
  });
  if (problems.length) return { problems };

  const config = { text: parts.map((p) => p.text).join('\n---\n'), parts: parts.map(({ name, documents }) =>
    ({ name, documents })) };
  problems.push(...await configProblems(config, parts, extensions));
  if (problems.length) return { problems };
  return {
    problems: [],
    definition: {
      file: resolve(file), name: d.name, version: d.version, extensions, config,
      ...(secrets ? { secrets: { file: secrets, apiSecrets } } : {}),
      kernel: { args: d.kernel?.args ?? [], modules: d.kernel?.modules ?? [], ...(fragment ? { fragment } : {}) },
      ...(signingKey ? { signingKey } : {}),
      ...(registryCA ? { registryCA } : {}),
      ...(d.updates ? { updates: { url: d.updates.url, channel: d.updates.channel ?? 'stable' } } : {}),
      formats: d.formats ?? ['raw'],
      run: { forward, memoryMiB: d.run?.memory ?? RUN_MEMORY_MIB },
    },
  };
}

/** The text of a TUF root metadata file, or undefined with the problem noted. */
function rootJson(file: string, problems: string[]): string | undefined {
  const text = readIf(file);
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as { signed?: { _type?: string; version?: number } };
    if (v.signed?._type === 'root') return text;
    problems.push(`updates.root: ${file}: not a TUF root (its signed._type is ${JSON.stringify(v.signed?._type)})`);
  } catch (e) {
    problems.push(`updates.root: ${file}: not JSON (${(e as Error).message})`);
  }
  return undefined;
}

const readIf = (file: string) => (existsSync(file) && statSync(file).isFile() ? readFileSync(file, 'utf8') : '');

/**
 * The config checked as the machine would check it (the built-in types, those its extensions define), and no
 * document of a sensitive type written inline: a secret belongs in a file of its own (secrets:), not in a
 * definition that is kept in version control.
 */
async function configProblems(
  config: ApplianceDefinition['config'], parts: { inline: boolean }[], extensions: DefinedExtension[],
): Promise<string[]> {
  if (!parts.length) return [];
  const ctx = await offlineValidationContext(BUILTIN_TYPES as DefinitionInput[], BUILTIN_NAMESPACES);
  const source = { name: 'config', files: config.parts };
  const types = extensions.flatMap((e) => e.manifest?.types ?? []);
  try {
    const { docs } = validateConfig(config.text, ctx, source, undefined, { types, unknownWhy: [] });
    const baked = new Set(extensions.map((e) => e.name));
    return docs.flatMap((doc) => {
      const place = placeOf(doc.index, source);
      const what = `${place.name}: document ${place.index} (${doc.definition.displayType} ${doc.id})`;
      const inline = parts[config.parts.findIndex((p) => p.name === place.name)]?.inline;
      if (doc.definition.sensitivity === 'sensitive' && inline) {
        return [`${what}: a secret written inline; put it in a file of its own and name it in secrets: or config: `
          + 'path'];
      }
      // The image declares its extensions itself; a spec of the same name would fight it for the one process.
      if (doc.definition.type === EXTENSION_TYPE && baked.has(doc.id)) {
        return [`${what}: "${doc.id}" is an extension of this appliance (extensions:); the image declares it`];
      }
      return [];
    });
  } catch (e) {
    if (!(e instanceof ConfigRefused)) throw e;
    return e.problems;
  }
}

