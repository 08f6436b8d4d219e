// documents: multi-document YAML of resources (what `cosictl apply -f` takes and,
// later, the machine config). Validated as a whole against the resource definitions
// before anything is written: every problem is reported with the document's index,
// the field and the reason.
//
//   metadata:
//     type: Motd            # a type name or any alias
//     id: hello
//     namespace: config     # optional: the type's default namespace
//     labels: { k: v }      # optional
//     annotations: { k: v } # optional
//   spec:
//     text: Hello
import { resolveDefinition, type ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import { validateSpec } from '../../cosi/meta/schema.ts';
import type { Pointer } from '../../cosi/resource/resource.ts';
import { MAX_CONFIG_BYTES, scanNesting } from './config-input.ts';
import { isMap } from './safe-yaml.ts';
import { codeFrame, MAX_YAML_DOCUMENT_BYTES, parseUntrustedYaml } from '../../cosi/spec/yaml-guard.ts';
import { yielder } from './yielder.ts';
import { foreignLayer, LAYER_WRITERS } from '../model/layers.ts';

export interface ResourceDocument extends Pointer {
  /** 1-based position in the input. */
  index: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: unknown;
  definition: ResourceDefinitionSpec;
}

/**
 * What `cosictl get -o yaml` prints besides the settable fields: the machine's to keep, so a
 * document carrying them (a resource read back and applied again) has them ignored, not refused.
 */
export const READ_ONLY_METADATA = ['version', 'owner', 'phase', 'created', 'updated', 'finalizers'];

/** `duplicateOf`: the document this one repeats (the message says where it is). */
export interface DocumentProblem { index: number; what: string; message: string; duplicateOf?: number }

/** Where a config's documents came from: one name, or the files it was joined from, in order. */
export type ConfigSource = string | { name: string; files: readonly { name: string; documents: number }[] };

export const sourceName = (s: ConfigSource): string => (typeof s === 'string' ? s : s.name);

/** A document of the whole as the user knows it: the file it is in, and its number there. */
export function placeOf(index: number, source: ConfigSource): { name: string; index: number } {
  if (typeof source === 'string') return { name: source, index };
  let before = 0;
  for (const f of source.files) {
    if (index <= before + f.documents) return { name: f.name, index: index - before };
    before += f.documents;
  }
  return { name: source.name, index };
}

/** index 0: the input as a whole (too large, nested too deep). */
export function formatProblem(p: DocumentProblem, source: ConfigSource = 'input'): string {
  if (p.index === 0) return `${sourceName(source)}: ${p.message}`;
  const at = placeOf(p.index, source);
  let message = p.message;
  if (p.duplicateOf !== undefined) {
    const first = placeOf(p.duplicateOf, source);
    message = `duplicate of document ${first.index}${first.name === at.name ? '' : ` of ${first.name}`}`;
  }
  return `${at.name}: document ${at.index}${p.what ? ` (${p.what})` : ''}: ${message}`;
}

function stringMap(v: unknown, field: string, problems: string[]): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isMap(v)) {
    problems.push(`${field}: must be a mapping of strings`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') {
      problems.push(`${field}.${k}: must be a string, got ${JSON.stringify(val)}`);
    } else out[k] = String(val);
  }
  return out;
}

/** A document as YAML gave it: its value, or why there is none. Empty documents are left out. */
export type LoadedDocument = { index: number; value: unknown } | { index: number; why: string };

/** The documents of a text, each parsed on its own, or the problem of the text as a whole. */
export type Loaded = { docs: LoadedDocument[] } | { problem: DocumentProblem };

/**
 * The largest document: the YAML parser takes about 0.7 ms per KiB, and a config is parsed
 * a document at a time so that no document holds the event loop for much longer than 50 ms.
 */
export const MAX_DOCUMENT_BYTES = MAX_YAML_DOCUMENT_BYTES;

/**
 * The document texts of a stream. A line starting with --- or ... is a document
 * marker wherever it stands (YAML forbids one inside a scalar), so a linear scan finds them.
 */
export function splitDocuments(text: string): string[] {
  return documentPieces(text).map((p) => p.text);
}

/** The document texts of a stream, each with the number of its first line in the stream. */
function documentPieces(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let start = 0;
  let line = 1;
  const marker = /^(---|\.\.\.)(?=[ \t\r\n]|$)/gm;
  const piece = (end: number) => {
    const t = text.slice(start, end);
    out.push({ text: t, line });
    line += t.split('\n').length - 1;
  };
  for (let m = marker.exec(text); m; m = marker.exec(text)) {
    if (m.index > start || m[1] === '...') piece(m.index);
    start = m[1] === '...' ? m.index + 3 : m.index;
  }
  piece(text.length);
  return out.filter((d) => /[^\s]/.test(d.text.replace(/^---/, '').replace(/#.*$/gm, '')));
}

function loadOne(text: string, index: number, maxDocumentBytes: number, firstLine = 1): LoadedDocument | undefined {
  if (text.length > maxDocumentBytes) {
    return { index, why: `${(text.length / 1024).toFixed(0)} KiB, larger than the ${maxDocumentBytes >> 10} KiB `
      + 'a document may be (split it)' };
  }
  // Lines counted in the whole input, as an editor shows them; the offending lines below the message.
  const p = parseUntrustedYaml(text, { maxBytes: Infinity, firstLine });
  if (!p.ok) return { index, why: p.at ? `${p.message}\n${codeFrame(text, p.at, firstLine)}` : p.message };
  return p.value === null ? undefined : { index, value: p.value };
}

function precheck(text: string, maxBytes: number): DocumentProblem | undefined {
  if (text.length > maxBytes) return { index: 0, what: '', message: `larger than the ${maxBytes >> 20} MiB limit` };
  // Here, not where bytes become text: every text meets the parser through this function.
  const deep = scanNesting(text);
  return deep ? { index: 0, what: '', message: deep } : undefined;
}

/**
 * maxBytes: an input's limit by default; the machine's own persisted config may be larger, and
 * so may its documents (written through the API as protobuf, which has no YAML limit).
 */
export function loadDocuments(
  text: string, maxBytes = MAX_CONFIG_BYTES, maxDocumentBytes = MAX_DOCUMENT_BYTES,
): Loaded {
  const problem = precheck(text, maxBytes);
  if (problem) return { problem };
  const docs: LoadedDocument[] = [];
  for (const piece of documentPieces(text)) {
    const d = loadOne(piece.text, docs.length + 1, maxDocumentBytes, piece.line);
    if (d) docs.push(d);
  }
  return { docs };
}

/** loadDocuments, handing the event loop back every ~10 ms (the engine: other clients wait meanwhile). */
export async function loadDocumentsYielding(
  text: string, maxBytes = MAX_CONFIG_BYTES, maxDocumentBytes = MAX_DOCUMENT_BYTES,
): Promise<Loaded> {
  const problem = precheck(text, maxBytes);
  if (problem) return { problem };
  const docs: LoadedDocument[] = [];
  const pause = yielder();
  for (const piece of documentPieces(text)) {
    const d = loadOne(piece.text, docs.length + 1, maxDocumentBytes, piece.line);
    if (d) docs.push(d);
    await pause();
  }
  return { docs };
}

export interface CheckOptions {
  /**
   * Skip (and say) a spec of another layer even written by hand: the machine's own saved config, which may hold
   * one declared before a config could declare the config layer only, is not refused whole at boot for it.
   */
  skipForeignLayers?: boolean;
}

/** Loaded documents checked against the definitions and namespaces: the resources, and every problem. */
export function checkDocuments(
  loaded: Loaded, defs: readonly ResourceDefinitionSpec[], namespaces: ReadonlySet<string>,
  o: CheckOptions = {},
): { docs: ResourceDocument[]; problems: DocumentProblem[]; skipped: DocumentProblem[] } {
  const docs: ResourceDocument[] = [];
  const problems: DocumentProblem[] = [];
  const skipped: DocumentProblem[] = [];
  if ('problem' in loaded) return { docs, problems: [loaded.problem], skipped };
  const seen = new Map<string, number>();
  for (const d of loaded.docs) {
    const index = d.index;
    if ('why' in d) {
      problems.push({ index, what: '', message: d.why });
      continue;
    }
    const obj = d.value;
    const local: string[] = [];
    if (!isMap(obj)) {
      problems.push({ index, what: '', message: 'must be a mapping with metadata and spec' });
      continue;
    }
    for (const k of Object.keys(obj)) {
      if (k !== 'metadata' && k !== 'spec') local.push(`${k}: unknown top-level field (expected metadata and spec)`);
    }
    const md = obj.metadata;
    if (!isMap(md)) {
      problems.push({ index, what: '', message: 'metadata: required mapping (with type and id)' });
      continue;
    }
    for (const k of Object.keys(md)) {
      if (!['type', 'id', 'namespace', 'labels', 'annotations', ...READ_ONLY_METADATA].includes(k)) {
        local.push(`metadata.${k}: not settable (allowed: type, id, namespace, labels, annotations)`);
      }
    }
    const typeName = md.type;
    const id = md.id;
    const what = `${typeof typeName === 'string' ? typeName : '?'} ${typeof id === 'string' ? id : '?'}`;
    if (typeof typeName !== 'string' || !typeName) {
      problems.push({ index, what, message: 'metadata.type: required' });
      continue;
    }
    const def = resolveDefinition(defs, typeName);
    if (!def) {
      problems.push({
        index, what, message: `metadata.type: unknown resource type "${typeName}" (see \`cosictl api-resources\`)`,
      });
      continue;
    }
    // Users declare the config layer; a spec of another layer is its writer's. Read back (`get -o yaml` prints its
    // owner) it is skipped, so what get prints applies back; written by hand it is refused, saying whose it is.
    const layer = foreignLayer(def.schema, obj.spec);
    if (layer) {
      const w = `${def.displayType} ${String(id)}`;
      if (md.owner !== undefined || o.skipForeignLayers) {
        const owner = md.owner === undefined ? '' : ` (owner ${JSON.stringify(md.owner)})`;
        skipped.push({ index, what: w, message: `the ${layer} layer belongs to ${LAYER_WRITERS[layer]}${owner}: `
          + 'skipped; a config declares the config layer' });
      } else {
        problems.push({ index, what: w, message: `spec.layer: "${layer}" belongs to ${LAYER_WRITERS[layer]}; `
          + 'a config declares the config layer only (leave layer out)' });
      }
      continue;
    }
    if (typeof id !== 'string' || !/^[^\s/]{1,253}$/.test(id)) {
      local.push(`metadata.id: required, 1-253 characters, no spaces or slashes, got ${JSON.stringify(id)}`);
    }
    const namespace = md.namespace === undefined ? def.defaultNamespace : md.namespace;
    if (typeof namespace !== 'string' || !namespaces.has(namespace)) {
      local.push(`metadata.namespace: unknown namespace ${JSON.stringify(namespace)} `
        + `(${def.displayType} lives in "${def.defaultNamespace}")`);
    }
    const labels = stringMap(md.labels, 'metadata.labels', local);
    const annotations = stringMap(md.annotations, 'metadata.annotations', local);
    if (!('spec' in obj)) local.push('spec: required');
    else if (def.schema) local.push(...validateSpec(def.schema, obj.spec));
    const key = `${namespace}/${def.type}/${id}`;
    const duplicateOf = seen.get(key);
    seen.set(key, index);
    if (local.length || duplicateOf !== undefined) {
      for (const m of local) problems.push({ index, what: `${def.displayType} ${String(id)}`, message: m });
      if (duplicateOf !== undefined) {
        problems.push({ index, what: `${def.displayType} ${String(id)}`, message: 'duplicate', duplicateOf });
      }
      continue;
    }
    docs.push({
      index, namespace: namespace as string, type: def.type, id: id as string, labels, annotations,
      spec: obj.spec ?? null, definition: def,
    });
  }
  return { docs, problems, skipped };
}

/** Load and check in one go (tests, and callers with a small text). */
export function parseDocuments(
  text: string, defs: readonly ResourceDefinitionSpec[], namespaces: ReadonlySet<string>, maxBytes = MAX_CONFIG_BYTES,
): { docs: ResourceDocument[]; problems: DocumentProblem[]; skipped: DocumentProblem[] } {
  return checkDocuments(loadDocuments(text, maxBytes), defs, namespaces);
}
