import t from 'tap';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { validateSpec } from '../cosi/meta/schema.ts';
import { specMessages } from '../machinery/model/spec-codecs.ts';
import {
  BUILTIN_TYPES_TS, builtinDefinitions, generate, generateBuiltinTypes, RESOURCES_MD, SECURITY_MD, splitComment,
} from './gen-docs.ts';
import { generateSecurityDoc } from './lib/security-doc.ts';
import { editorSchemas } from '../image/appliance/editor-schemas.ts';

t.test('docs/resources.md matches the definitions and proto/ (run `npm run gen:proto` after editing)', async (t) => {
  t.equal(readFileSync(RESOURCES_MD, 'utf8'), generate());
});

t.test('docs/schemas: the editors\' JSON Schemas match the validators\' (run `npm run gen:proto`)', async (t) => {
  for (const [file, text] of editorSchemas()) t.equal(readFileSync(file, 'utf8'), text, file);
});

t.test('docs/security.md matches the role table and the definitions (run `npm run gen:proto`)', async (t) => {
  t.equal(readFileSync(SECURITY_MD, 'utf8'), generateSecurityDoc(builtinDefinitions()));
});

t.test('proto/gen/builtin-types.ts matches the definitions (run `npm run gen:proto` after editing)', async (t) => {
  t.equal(readFileSync(BUILTIN_TYPES_TS, 'utf8'), generateBuiltinTypes());
});

t.test('every example in a .proto comment is a valid spec of its type', async (t) => {
  let n = 0;
  for (const d of builtinDefinitions()) {
    if (!d.protoMessage || !d.schema) continue;
    const { example } = splitComment(specMessages().messages.get(d.protoMessage)?.comment);
    if (!example) continue;
    n++;
    t.same(validateSpec(d.schema, YAML.parse(example)), [], `${d.type}: the example is valid`);
  }
  t.ok(n >= 12, `${n} examples checked`);
});

t.test('every type a user declares has an example', async (t) => {
  const text = generate();
  for (const name of [
    'AddressSpec', 'RouteSpec', 'LinkSpec', 'DhcpSpec', 'HostnameSpec', 'ResolverSpec', 'MountSpec', 'KernelParamSpec',
    'KernelModuleSpec', 'TimeServerSpec', 'Motd', 'PowerRequest',
  ]) {
    t.match(text, new RegExp(`### ${name}\\n[\\s\\S]*?\`\`\`yaml\\nmetadata:`), name);
  }
});
