// format: how cosictl prints resources: a table from the definition's print columns
// (wide: with owner, phase and age; label columns on request), the whole resource as YAML or
// JSON (talosctl's shape: metadata + spec; several in JSON are one List), TYPE/ID names, or a
// kubectl-style jsonpath template.
import YAML from 'yaml';
import type { ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';
import { OpaqueSpec, type Resource } from '../../cosi/resource/resource.ts';
import { evalJsonPath, renderCell, renderTemplate } from './jsonpath.ts';
import { isLayered, UNSAID_LAYER } from '../../machinery/model/layers.ts';

export type OutputFormat = 'table' | 'wide' | 'yaml' | 'json' | 'name' | 'jsonpath';
export interface Output { format: OutputFormat; template?: string }

export const OUTPUT_FORMATS = 'table, wide, yaml (or yml), json, name or jsonpath=TEMPLATE';

/** `-o` as given: a format name, or jsonpath=TEMPLATE. */
export function parseOutput(o: string): Output | undefined {
  const jp = /^jsonpath=(.*)$/s.exec(o);
  if (jp) return jp[1] ? { format: 'jsonpath', template: jp[1] } : undefined;
  if (o === 'yml') return { format: 'yaml' }; // what the files are often called
  return (['table', 'wide', 'yaml', 'json', 'name'] as const).includes(o as 'table')
    ? { format: o as OutputFormat } : undefined;
}

export function resourceDocument(r: Resource): { metadata: Record<string, unknown>; spec: unknown } {
  const m = r.metadata;
  return {
    metadata: {
      namespace: m.namespace, type: m.type, id: m.id, version: m.version, owner: m.owner, phase: m.phase,
      created: m.created ? new Date(m.created).toISOString() : undefined,
      updated: m.updated ? new Date(m.updated).toISOString() : undefined,
      ...(Object.keys(m.labels).length ? { labels: m.labels } : {}),
      ...(Object.keys(m.annotations).length ? { annotations: m.annotations } : {}),
      ...(m.finalizers.length ? { finalizers: m.finalizers } : {}),
    },
    spec: r.spec instanceof OpaqueSpec ? YAML.parse(r.spec.yaml || 'null') : r.spec,
  };
}

/** The table's extras: wide columns, a LABELS column, a column per label key. */
export interface TableOptions { wide?: boolean; showLabels?: boolean; labelColumns?: readonly string[] }

export function tableHeader(def: ResourceDefinitionSpec | undefined, marks: boolean, o: TableOptions = {}): string[] {
  return [
    ...(marks ? [''] : []), 'NAMESPACE', 'TYPE', 'ID', 'VERSION',
    ...(def?.printColumns ?? []).map((c) => c.name.toUpperCase()),
    ...(o.labelColumns ?? []).map((k) => k.toUpperCase()),
    ...(o.wide ? ['OWNER', 'PHASE', 'AGE'] : []),
    ...(o.showLabels ? ['LABELS'] : []),
  ];
}

/** 45s, 12m, 5h, 3d: how long ago `ms` was, as kubectl's AGE column says it. */
export function age(ms: number | undefined, now: number): string {
  if (!ms) return '';
  const s = Math.max(0, Math.floor((now - ms) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 120 * 60) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const LAYER_PATH = '{.layer}';

export function tableRow(
  r: Resource, def: ResourceDefinitionSpec | undefined, mark?: string, o: TableOptions = {}, now = Date.now(),
): string[] {
  const spec = r.spec instanceof OpaqueSpec ? YAML.parse(r.spec.yaml || 'null') : r.spec;
  const labels = r.metadata.labels;
  return [
    ...(mark !== undefined ? [mark] : []),
    r.metadata.namespace, def?.displayType ?? r.metadata.type, r.metadata.id, String(r.metadata.version),
    ...(def?.printColumns ?? []).map((c) => renderCell(evalJsonPath(c.jsonPath, spec)
      // What users declare names no layer: the column says config, as the merge reads it.
      ?? (c.jsonPath === LAYER_PATH && isLayered(def?.schema) ? UNSAID_LAYER : undefined))),
    ...(o.labelColumns ?? []).map((k) => labels[k] ?? ''),
    ...(o.wide ? [r.metadata.owner || '', r.metadata.phase, age(r.metadata.created, now)] : []),
    ...(o.showLabels ? [Object.entries(labels).map(([k, v]) => (v ? `${k}=${v}` : k)).join(',') || '<none>'] : []),
  ];
}

/** TYPE/ID, in a form `cosictl get` and `delete` take back (the type's lowercase display name). */
export function nameOf(r: Resource, def: ResourceDefinitionSpec | undefined): string {
  return `${(def?.displayType ?? r.metadata.type).toLowerCase()}/${r.metadata.id}`;
}

/** Several resources as one JSON document, as kubectl prints a list. */
export const listDocument = (rs: Resource[]) => ({ kind: 'List', items: rs.map(resourceDocument) });

/** A template over one resource's document, or over the List of several. */
export function renderJsonPath(template: string, rs: Resource[], single: boolean): string {
  return renderTemplate(template, single && rs.length === 1 ? resourceDocument(rs[0]!) : listDocument(rs));
}

/**
 * YAML: one document per resource (what `apply -f` takes back). JSON: the resource itself when one was
 * asked for by id, else a List of them, so that the output is always one JSON document.
 */
export function renderDocuments(rs: Resource[], format: 'yaml' | 'json', single = false): string {
  if (format === 'json') {
    return JSON.stringify(single && rs.length === 1 ? resourceDocument(rs[0]!) : listDocument(rs), null, 2) + '\n';
  }
  return rs.map((r) => YAML.stringify(resourceDocument(r))).join('---\n');
}
