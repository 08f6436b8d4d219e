#!/usr/bin/env node
// npm bin: runs the bundled client (built by `npm run build` into out/cosictl.cjs).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const bundle = join(__dirname, '..', 'out', 'cosictl.cjs');
if (!existsSync(bundle)) {
  process.stderr.write(`cosictl: ${bundle} is not built; run \`npm run build\` in ${join(__dirname, '..')}\n`);
  process.exit(5);
}
require(bundle);
