// yaml-library: the `yaml` package, loaded at its first use rather than with the modules that use it. A plugin
// process parses YAML only for a spec that comes without its proto (a type no message describes), and evaluating the
// package took each plugin 7-13 ms of its start in the guest. A CommonJS module because an ES module can only load
// another at its own start or asynchronously; the bundler keeps this require lazy.
let yaml;
exports.yamlLibrary = () => {
  yaml ??= require('yaml');
  return yaml;
};
