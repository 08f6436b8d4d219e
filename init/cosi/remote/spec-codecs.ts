// spec-codecs: types whose spec also travels as proto_spec (clients such as talosctl
// decode resource definitions from it). Every other spec travels as YAML only.
import { DEFINITION_TYPE, NAMESPACE_TYPE, type NamespaceSpec, type ResourceDefinitionSpec } from '../meta/definition.ts';
import { decode, encode } from './proto.ts';

export interface ProtoSpecCodec { toProto(spec: unknown): Uint8Array; fromProto(bytes: Uint8Array, yaml: unknown): unknown }

interface WireDefinition {
  resource_type: string; display_type: string; default_namespace: string; aliases: string[]; all_aliases: string[];
  print_columns: { name: string; json_path: string }[]; sensitivity: number;
}

export const PROTO_SPEC_CODECS: ReadonlyMap<string, ProtoSpecCodec> = new Map<string, ProtoSpecCodec>([
  [NAMESPACE_TYPE, {
    toProto: (s) => encode('NamespaceSpec', { description: (s as NamespaceSpec).description }),
    fromProto: (b) => ({ description: decode<{ description: string }>('NamespaceSpec', b).description }),
  }],
  [DEFINITION_TYPE, {
    toProto: (s) => {
      const d = s as ResourceDefinitionSpec;
      return encode('ResourceDefinitionSpec', {
        resource_type: d.type, display_type: d.displayType, default_namespace: d.defaultNamespace,
        aliases: d.aliases, all_aliases: d.allAliases,
        print_columns: d.printColumns.map((c) => ({ name: c.name, json_path: c.jsonPath })),
        sensitivity: d.sensitivity === 'sensitive' ? 1 : 0,
      });
    },
    // Our schema extension lives only in the YAML; keep it when the YAML has it.
    fromProto: (b, yaml) => {
      const w = decode<WireDefinition>('ResourceDefinitionSpec', b);
      const schema = (yaml as { schema?: unknown } | null)?.schema;
      return {
        type: w.resource_type, displayType: w.display_type, defaultNamespace: w.default_namespace,
        aliases: [...w.aliases], allAliases: [...w.all_aliases],
        printColumns: w.print_columns.map((c) => ({ name: c.name, jsonPath: c.json_path })),
        ...(w.sensitivity === 1 ? { sensitivity: 'sensitive' } : {}),
        ...(schema ? { schema } : {}),
      };
    },
  }],
]);
