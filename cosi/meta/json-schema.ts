// json-schema: a spec schema (schema.ts) as a JSON Schema (draft 2020-12) document, for editors: YAML files name it
// with `# yaml-language-server: $schema=...` and get completion and errors as they type. Written from the schema our
// own validator checks, never by hand, so the two cannot disagree on a file's shape. Our string formats that JSON
// Schema has too become its formats; the others, and a pattern's words, go into the description (a JSON Schema
// validator treats an unknown format as a note, and editors show descriptions).
import { FORMAT_WORDS, type SpecSchema, type StringFormat } from './schema.ts';

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** Ours that mean what JSON Schema's formats of these names mean. */
const SAME_FORMAT: Partial<Record<StringFormat, string>> = {
  ipv4: 'ipv4', ipv6: 'ipv6', hostname: 'hostname', timestamp: 'date-time',
};

type Json = Record<string, unknown>;

const withWords = (description: string | undefined, words: string[]): Json => {
  const all = [description, ...words].filter(Boolean).join(' ');
  return all ? { description: all } : {};
};

function convert(s: SpecSchema): Json {
  switch (s.type) {
    case 'any': return s.description ? { description: s.description } : {};
    case 'boolean': return { type: 'boolean', ...withWords(s.description, []) };
    case 'integer': case 'number': return {
      type: s.type, ...withWords(s.description, []),
      ...(s.minimum !== undefined ? { minimum: s.minimum } : {}),
      ...(s.maximum !== undefined ? { maximum: s.maximum } : {}),
    };
    case 'string': {
      const words = [
        ...(s.patternHelp ? [`Must be ${s.patternHelp}.`] : []),
        ...(s.format && !SAME_FORMAT[s.format] ? [`Must be ${FORMAT_WORDS[s.format]}.`] : []),
      ];
      return {
        type: 'string', ...withWords(s.description, words),
        ...(s.enum ? { enum: s.enum } : {}), ...(s.pattern ? { pattern: s.pattern } : {}),
        ...(s.format && SAME_FORMAT[s.format] ? { format: SAME_FORMAT[s.format] } : {}),
        ...(s.minLength !== undefined ? { minLength: s.minLength } : {}),
        ...(s.maxLength !== undefined ? { maxLength: s.maxLength } : {}),
      };
    }
    case 'array': return {
      type: 'array', ...withWords(s.description, []), items: convert(s.items),
      ...(s.minItems !== undefined ? { minItems: s.minItems } : {}),
      ...(s.maxItems !== undefined ? { maxItems: s.maxItems } : {}),
    };
    case 'object': {
      const extra = s.additionalProperties ?? false;
      return {
        type: 'object', ...withWords(s.description, []),
        ...(s.properties ? {
          properties: Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, convert(v)])),
        } : {}),
        ...(s.required?.length ? { required: s.required } : {}),
        additionalProperties: typeof extra === 'boolean' ? extra : convert(extra),
      };
    }
  }
}

/** The JSON Schema document of `schema`: `id` is where it is published (its `$id`), `title` what editors show. */
export function toJsonSchema(schema: SpecSchema, o: { id: string; title: string }): Json {
  return { $schema: JSON_SCHEMA_DIALECT, $id: o.id, title: o.title, ...convert(schema) };
}
