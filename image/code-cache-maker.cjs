// code-cache-maker: runs the bundle (CODE_CACHE_BUNDLE, or the role's own in CODE_CACHE_ROLE_BUNDLES) as
// image/code-cache-loader.cjs would, compiled without a cache, and writes V8's code cache of it (every function this
// process compiled) to CODE_CACHE_DIR, named by role: when the engine ends it (this SIGTERM handler was added before
// the bundle's: the cache holds its start and its work, not its shutdown), or at its exit for a command that ends by
// itself. image/code-cache.ts runs it.
const vm = require('node:vm');
const { wrap } = require('node:module');
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const role = process.argv[2] === 'plugin' ? `plugin-${process.argv[3]}`
  : process.env.CODE_CACHE_ROLE ?? process.argv[2];
const own = JSON.parse(process.env.CODE_CACHE_ROLE_BUNDLES ?? '{}')[role];
const bundle = own ?? process.env.CODE_CACHE_BUNDLE;
// Named as the loader names it (its asset's name).
const filename = own ? `bundle-${role}.cjs` : 'bundle.cjs';
const script = new vm.Script(wrap(readFileSync(bundle, 'utf8')), { filename });
let written = false;
const write = () => {
  if (written) return;
  written = true;
  writeFileSync(join(process.env.CODE_CACHE_DIR, `code-cache-${role}`), script.createCachedData());
};
process.once('SIGTERM', write);
process.once('exit', write);
script.runInThisContext()(module.exports, require, module, bundle, '/');
