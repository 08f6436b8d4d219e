// editor-schemas: the JSON Schemas editors validate appliance.yaml and an extension's manifest.yaml with
// (yaml-language-server's `# yaml-language-server: $schema=...`), generated from the same schemas the
// validators use (DEFINITION_SCHEMA, MANIFEST_SCHEMA): written by `npm run gen:proto`, and a test says when
// the files in docs/schemas are stale. The package carries them, so a project points at its node_modules copy.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toJsonSchema } from '../../cosi/meta/json-schema.ts';
import { MANIFEST_SCHEMA } from '../../machinery/model/extension-manifest.ts';
import { DEFINITION_SCHEMA } from './definition.ts';

const SCHEMAS_DIR = fileURLToPath(new URL('../../docs/schemas/', import.meta.url));
export const APPLIANCE_SCHEMA_FILE = join(SCHEMAS_DIR, 'appliance.schema.json');
export const MANIFEST_SCHEMA_FILE = join(SCHEMAS_DIR, 'extension-manifest.schema.json');

/** Each schema file and the text it should hold. */
export function editorSchemas(): [string, string][] {
  const text = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  return [
    [APPLIANCE_SCHEMA_FILE, text(toJsonSchema(DEFINITION_SCHEMA,
      { id: 'https://appliance.dev/schemas/appliance.schema.json', title: 'appliance.yaml, appliance.dev/v1alpha1' }))],
    [MANIFEST_SCHEMA_FILE, text(toJsonSchema(MANIFEST_SCHEMA,
      { id: 'https://appliance.dev/schemas/extension-manifest.schema.json', title: 'an extension\'s manifest.yaml' }))],
  ];
}
