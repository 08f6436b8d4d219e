// package-main: the package's `appliance` bin (bundled into dist/appliance.mjs by scripts/pack-dist.ts): the
// appliance command on the system kit the package carries beside it (dist/system), so that a build from an
// installed package compiles nothing.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applianceMain } from './command.ts';

/** dist/, where this module is once bundled. */
const here = dirname(fileURLToPath(import.meta.url));

process.exit(await applianceMain(process.argv.slice(2), {
  systemKit: async () => join(here, 'system'),
  exampleProgram: async () => join(here, 'examples', 'hello-web'),
  schemaFile: join(here, '..', 'docs', 'schemas', 'appliance.schema.json'),
  invocation: 'npx appliance',
  cosictl: 'npx cosictl',
}));
