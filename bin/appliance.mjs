#!/usr/bin/env node
// npm bin: the appliance command of the installed package (dist/appliance.mjs, made by its prepack step with the
// system kit it builds on). In this repository, `npm run appliance -- <command>` runs it from the sources.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/appliance.mjs', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write(`appliance: ${bundle} is not built: in the repository, run \`npm run appliance -- <command>\`, `
    + 'or install the package `npm pack` makes\n');
  process.exit(5);
}
await import(bundle);
