// meta-codecs: the specs of the meta namespace on the wire. Both travel as proto_spec
// (the upstream meta.proto messages; clients such as talosctl decode definitions from
// it) and yaml_spec. Our extension of a definition (EXTENSION_KEYS: protoMessage,
// schema, access, ...) has no field in the upstream message and travels in the YAML only.
import { checkSchema, validateSpec, type SpecSchema } from '../meta/schema.ts';
import {
  DEFINITION_TYPE, EXTENSION_KEYS, fillDefinition, NAMESPACE_TYPE, typeNameProblem, type NamespaceSpec,
  type ResourceDefinitionSpec,
} from '../meta/definition.ts';
import { StateError } from '../state/errors.ts';
import { staticCodecs, type SpecCodec, type SpecCodecs } from '../spec/spec-codec.ts';
import { specDifferences } from '../spec/spec-equal.ts';
import { jsonYamlText, yamlText } from '../spec/yaml-text.ts';
import { decode, encode } from './wire.ts';

/** A namespace's name: a DNS label. */
export const NAMESPACE_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';

const NAMESPACE_SCHEMA: SpecSchema = {
  type: 'object', properties: { description: { type: 'string', maxLength: 1024 } },
};

const name = {
  type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$', patternHelp: '1-63 letters, digits, dots, dashes',
} as const;
const DEFINITION_SCHEMA: SpecSchema = {
  type: 'object', required: ['type', 'defaultNamespace'],
  properties: {
    type: { type: 'string', description: 'The type name: <PluralCamelCase>.<dns.suffix>, e.g. Widgets.example.com.' },
    displayType: { type: 'string', description: 'The singular shown in tables (default: derived from the plural).' },
    defaultNamespace: {
      type: 'string', pattern: NAMESPACE_PATTERN, patternHelp: 'a DNS label',
      description: 'Where resources live unless a client names a namespace; created as needed.',
    },
    aliases: {
      type: 'array', maxItems: 16, items: name,
      description: 'Short names for clients (cosictl get <alias>); unique across all types.',
    },
    allAliases: {
      type: 'array', maxItems: 64, items: { type: 'string' },
      description: 'Every name of the type (filled by the machine).',
    },
    printColumns: {
      type: 'array', maxItems: 16, description: 'Table columns: JSONPath over the spec.',
      items: {
        type: 'object', required: ['name', 'jsonPath'],
        properties: { name: { type: 'string', minLength: 1 }, jsonPath: { type: 'string', minLength: 1 } },
      },
    },
    sensitivity: { type: 'string', enum: ['sensitive'], description: 'sensitive: readable by admins only.' },
    protoMessage: {
      type: 'string', pattern: '^[A-Za-z_][\\w.]*$', patternHelp: 'a full protobuf message name',
      description: 'The protobuf message of the spec.',
    },
    protoDescriptor: {
      type: 'string', pattern: '^[A-Za-z0-9+/=\\s]*$', patternHelp: 'base64',
      description: 'A serialized FileDescriptorSet holding protoMessage, base64.',
    },
    schema: {
      type: 'any', description: 'For a type without a message: the schema of its specs (a JSON-schema subset).',
    },
    ephemeral: {
      type: 'boolean', description: 'Requests acted on once: no part of the persisted machine config.',
    },
    needsReboot: {
      type: 'boolean', description: 'Changes to resources of this type take effect at the next boot.',
    },
    access: {
      type: 'string', enum: ['admin', 'controllers'],
      description: 'Who writes resources of this type: admin (admins only), controllers (statuses: nobody '
        + 'through the API); absent: users (admins and operators).',
    },
    formerTypes: {
      type: 'array', items: { type: 'string' },
      description: 'Full names the type had before a rename: a request naming one is served as this type.',
    },
  },
};

interface WireDefinition {
  resource_type: string; display_type: string; default_namespace: string; aliases: string[]; all_aliases: string[];
  print_columns: { name: string; json_path: string }[]; sensitivity: number;
}

export const NAMESPACE_CODEC: SpecCodec = {
  message: 'cosi.resource.meta.NamespaceSpec',
  schema: NAMESPACE_SCHEMA,
  toProto: (s) => encode('NamespaceSpec', { description: (s as NamespaceSpec).description }),
  fromProto: (b) => ({ description: decode<{ description: string }>('NamespaceSpec', b).description }),
  toYaml: yamlText,
  validate: (v) => validateSpec(NAMESPACE_SCHEMA, v),
  normalize: (v) => ({ description: (v as Partial<NamespaceSpec>).description ?? '' }),
};

/** Problems of a definition beyond its shape: a bad type name, a broken schema. */
function definitionProblems(v: unknown): string[] {
  const d = v as Partial<ResourceDefinitionSpec>;
  const errs: string[] = [];
  if (typeof d.type === 'string') {
    const p = typeNameProblem(d.type);
    if (p) errs.push(`spec.type: ${p}`);
  }
  if (d.schema !== undefined && !d.protoMessage) errs.push(...checkSchema(d.schema, 'spec.schema'));
  if (d.protoDescriptor && !d.protoMessage) errs.push('spec.protoDescriptor: name the message in it with protoMessage');
  return errs;
}

export const DEFINITION_CODEC: SpecCodec = {
  message: 'cosi.resource.meta.ResourceDefinitionSpec',
  schema: DEFINITION_SCHEMA,
  toProto(s) {
    const d = s as ResourceDefinitionSpec;
    return encode('ResourceDefinitionSpec', {
      resource_type: d.type, display_type: d.displayType, default_namespace: d.defaultNamespace,
      aliases: d.aliases, all_aliases: d.allAliases,
      print_columns: d.printColumns.map((c) => ({ name: c.name, json_path: c.jsonPath })),
      sensitivity: d.sensitivity === 'sensitive' ? 1 : 0,
    });
  },
  fromProto(b) {
    const w = decode<WireDefinition>('ResourceDefinitionSpec', b);
    return {
      type: w.resource_type, displayType: w.display_type, defaultNamespace: w.default_namespace,
      aliases: [...w.aliases], allAliases: [...w.all_aliases],
      printColumns: w.print_columns.map((c) => ({ name: c.name, jsonPath: c.json_path })),
      ...(w.sensitivity === 1 ? { sensitivity: 'sensitive' } : {}),
    };
  },
  toYaml: jsonYamlText,
  // proto_spec carries the upstream fields only: those must agree, our extension comes from the YAML.
  combine(fromProto, fromYaml) {
    const p = fromProto as ResourceDefinitionSpec;
    const y = fromYaml as ResourceDefinitionSpec;
    const upstream: Record<string, unknown> = { ...y };
    const extension: Record<string, unknown> = {};
    for (const k of EXTENSION_KEYS) {
      if (y[k] !== undefined && y[k] !== false) extension[k] = y[k];
      delete upstream[k];
    }
    const disagree = specDifferences(p, upstream);
    if (disagree.length) return { disagree };
    return { spec: { ...p, ...extension } };
  },
  validate: (v) => {
    const shape = validateSpec(DEFINITION_SCHEMA, v);
    return shape.length ? shape : definitionProblems(v);
  },
  // What a client sends is completed as the reference runtime does: display type, aliases.
  normalize(v) {
    const d = v as ResourceDefinitionSpec;
    try {
      const extension: Record<string, unknown> = {};
      for (const k of EXTENSION_KEYS) if (d[k] !== undefined && d[k] !== false) extension[k] = d[k];
      if (d.protoDescriptor) extension.protoDescriptor = d.protoDescriptor.replace(/\s+/g, '');
      return fillDefinition({
        ...extension,
        type: d.type, defaultNamespace: d.defaultNamespace, aliases: d.aliases ?? [],
        ...(d.displayType ? { displayType: d.displayType } : {}),
        ...(d.printColumns ? { printColumns: d.printColumns } : {}),
        ...(d.sensitivity === 'sensitive' ? { sensitive: true } : {}),
      }, { initials: false });
    } catch (e) { throw StateError.from(e); }
  },
};


/** Codecs of the meta types alone: a client or server that knows no other message (every other spec as YAML). */
export const META_CODECS: SpecCodecs = staticCodecs([
  [NAMESPACE_TYPE, NAMESPACE_CODEC], [DEFINITION_TYPE, DEFINITION_CODEC],
]);
