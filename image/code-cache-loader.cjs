// code-cache-loader: the executable's main (image/sea.ts; the bundle and its code caches are SEA assets, made by
// image/code-cache.ts). Node's own SEA code cache holds only what V8 compiles before the bundle runs, its top level:
// every function a process then calls was compiled again in that process, six Node processes at every boot. Here the
// bundle is compiled with the cache a process of the same role left on the build host (PID 1 takes serve's, a plugin
// its own, any other command the top level's): what that process compiled comes compiled. A cache V8 refuses (another
// V8 or other flags) only costs the compiling; APPLIANCE_CODE_CACHE_DEBUG=1 says which bundle and cache it used, and
// whether V8 took or refused the cache.
// A plugin of the image runs its own bundle (image/bundle.ts bundlePlugin): its code only.
const { getAsset } = require('node:sea');
const vm = require('node:vm');
const { wrap } = require('node:module');

const role = process.pid === 1 ? 'serve' : process.argv[2] === 'plugin' ? `plugin-${process.argv[3]}` : process.argv[2];
/** The bundle compiled; neither the cache nor the source is held once it is (they would stay in the heap). */
const compile = () => {
  const roles = JSON.parse(getAsset('code-cache-roles', 'utf8'));
  const cache = roles.includes(role) ? role : 'default';
  const bundle = JSON.parse(getAsset('bundle-roles', 'utf8')).includes(role) ? `bundle-${role}` : 'bundle';
  const cachedData = Buffer.from(getAsset(`code-cache-${cache}`));
  const script = new vm.Script(wrap(getAsset(bundle, 'utf8')), { filename: `${bundle}.cjs`, cachedData });
  if (process.env.APPLIANCE_CODE_CACHE_DEBUG) {
    process.stderr.write(`${bundle}, code cache ${cache} (${cachedData.length} bytes): `
      + `${script.cachedDataRejected ? 'refused' : 'taken'}\n`);
  }
  return script.runInThisContext();
};
compile()(module.exports, require, module, process.execPath, '/');
