// format: how cosictl prints resources: a table from the definition's print
// columns, or the whole resource as YAML or JSON (talosctl's shape: metadata + spec).
import YAML from 'yaml';
import type { ResourceDefinitionSpec } from '../../init/cosi/meta/definition.ts';
import { OpaqueSpec, type Resource } from '../../init/cosi/resource/resource.ts';
import { evalJsonPath, renderCell } from './jsonpath.ts';

export type OutputFormat = 'table' | 'yaml' | 'json';

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

export function tableHeader(def: ResourceDefinitionSpec | undefined, marks: boolean): string[] {
  return [
    ...(marks ? [''] : []), 'NAMESPACE', 'TYPE', 'ID', 'VERSION',
    ...(def?.printColumns ?? []).map((c) => c.name.toUpperCase()),
  ];
}

export function tableRow(r: Resource, def: ResourceDefinitionSpec | undefined, mark?: string): string[] {
  const spec = r.spec instanceof OpaqueSpec ? YAML.parse(r.spec.yaml || 'null') : r.spec;
  return [
    ...(mark !== undefined ? [mark] : []),
    r.metadata.namespace, def?.displayType ?? r.metadata.type, r.metadata.id, String(r.metadata.version),
    ...(def?.printColumns ?? []).map((c) => renderCell(evalJsonPath(c.jsonPath, spec))),
  ];
}

export function renderDocuments(rs: Resource[], format: 'yaml' | 'json'): string {
  if (format === 'json') return rs.map((r) => JSON.stringify(resourceDocument(r), null, 2)).join('\n') + '\n';
  return rs.map((r) => YAML.stringify(resourceDocument(r))).join('---\n');
}
