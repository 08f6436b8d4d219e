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
import YAML from 'yaml';
import { resolveDefinition, type ResourceDefinitionSpec } from '../cosi/meta/definition.ts';
import { validateSpec } from '../cosi/meta/schema.ts';
import type { Pointer } from '../cosi/resource/resource.ts';
import { MAX_CONFIG_BYTES, scanNesting } from './config-input.ts';
import { isMap, MAX_ALIAS_COUNT } from './safe-yaml.ts';

export interface ResourceDocument extends Pointer {
  /** 1-based position in the input. */
  index: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: unknown;
  definition: ResourceDefinitionSpec;
}

export interface DocumentProblem { index: number; what: string; message: string }

/** index 0: the input as a whole (too large, nested too deep). */
export function formatProblem(p: DocumentProblem, source = 'input'): string {
  if (p.index === 0) return `${source}: ${p.message}`;
  return `${source}: document ${p.index}${p.what ? ` (${p.what})` : ''}: ${p.message}`;
}

function stringMap(v: unknown, field: string, problems: string[]): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isMap(v)) { problems.push(`${field}: must be a mapping of strings`); return {}; }
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') {
      problems.push(`${field}.${k}: must be a string, got ${JSON.stringify(val)}`);
    } else out[k] = String(val);
  }
  return out;
}

/** maxBytes: an input's limit by default; the machine's own persisted config may be larger. */
export function parseDocuments(
  text: string, defs: readonly ResourceDefinitionSpec[], namespaces: ReadonlySet<string>, maxBytes = MAX_CONFIG_BYTES,
): { docs: ResourceDocument[]; problems: DocumentProblem[] } {
  const docs: ResourceDocument[] = [];
  const problems: DocumentProblem[] = [];
  const seen = new Map<string, number>();
  if (text.length > maxBytes) {
    return { docs, problems: [{ index: 0, what: '', message: `larger than the ${maxBytes >> 20} MiB limit` }] };
  }
  // Here, not where bytes become text: every text meets the parser through this function.
  const deep = scanNesting(text);
  if (deep) return { docs, problems: [{ index: 0, what: '', message: deep }] };
  let index = 0;
  for (const d of YAML.parseAllDocuments(text)) {
    let obj: unknown;
    let why: string | undefined = d.errors.length
      ? `not valid YAML: ${d.errors[0]!.message.split('\n')[0]}` : undefined;
    if (!why) {
      // toJS refuses aliases expanding beyond 100 nodes (an alias bomb) by throwing.
      try { obj = d.toJS({ maxAliasCount: MAX_ALIAS_COUNT }); } catch (e) {
        why = `not accepted: ${(e as Error).message}`;
      }
    }
    // an empty document (e.g. a trailing ---)
    if (!why && obj === null) continue;
    index++;
    if (why) {
      problems.push({ index, what: '', message: why });
      continue;
    }
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
      if (!['type', 'id', 'namespace', 'labels', 'annotations'].includes(k)) {
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
    if (seen.has(key)) local.push(`duplicate of document ${seen.get(key)}`);
    seen.set(key, index);
    if (local.length) {
      for (const m of local) problems.push({ index, what: `${def.displayType} ${String(id)}`, message: m });
      continue;
    }
    docs.push({
      index, namespace: namespace as string, type: def.type, id: id as string, labels, annotations,
      spec: obj.spec ?? null, definition: def,
    });
  }
  return { docs, problems };
}
