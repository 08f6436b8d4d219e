#!/usr/bin/env node
// npm bin: runs the bundled client: the package's (dist/cosictl.cjs, made when it is packed), else the one
// `npm run build` makes in this repository (out/cosictl.cjs).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const bundle = [join(__dirname, '..', 'dist', 'cosictl.cjs'), join(__dirname, '..', 'out', 'cosictl.cjs')]
  .find((f) => existsSync(f));
if (!bundle) {
  process.stderr.write(`cosictl: out/cosictl.cjs is not built; run \`npm run build\` in ${join(__dirname, '..')}\n`);
  process.exit(5);
}
require(bundle);
