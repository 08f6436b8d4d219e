// An extension's manifest: a good one read whole; every problem of a bad one named by its key, all
// at once (the ExtensionStatus shows them), never a crash.
import t from 'tap';
import { CAPABILITY } from '../../native/index.ts';
import { checkManifest, MANIFEST_SCHEMA, parseManifest } from './extension-manifest.ts';
import { validateSpec } from '../../cosi/meta/schema.ts';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import YAML from 'yaml';

const NEVER = ['CAP_SYS_ADMIN', 'CAP_SYS_PTRACE', 'CAP_SYS_MODULE', 'CAP_SYS_BOOT'];
const CAPS = Object.keys(CAPABILITY).filter((c) => !NEVER.includes(c)).join(', ');

const GOOD = `
name: hello-python
version: 1.0.0
description: greets whoever a Greeting names
executable: /usr/bin/python3
args: [/plugin/main.py]
env: {PYTHONUNBUFFERED: "1"}
types:
  - type: Greetings.hello.example.com
    defaultNamespace: hello
    aliases: [greeting]
    printColumns: [{name: Name, jsonPath: '{.spec.name}'}]
    schema: {type: object, properties: {name: {type: string}}}
  - type: GreetingStatuses.hello.example.com
    defaultNamespace: hello
    access: controllers
outputs: [GreetingStatuses.hello.example.com]
capabilities: [CAP_NET_BIND_SERVICE]
memory: 64MiB
cpu: 50%
`;

t.test('a good manifest, read whole', async (t) => {
  const r = parseManifest(GOOD);
  t.same(r.problems, []);
  t.same(r.manifest, {
    name: 'hello-python', version: '1.0.0', description: 'greets whoever a Greeting names',
    executable: '/usr/bin/python3', args: ['/plugin/main.py'], env: { PYTHONUNBUFFERED: '1' },
    types: [
      {
        type: 'Greetings.hello.example.com', defaultNamespace: 'hello', aliases: ['greeting'],
        printColumns: [{ name: 'Name', jsonPath: '{.spec.name}' }],
        schema: { type: 'object', properties: { name: { type: 'string' } } },
      },
      { type: 'GreetingStatuses.hello.example.com', defaultNamespace: 'hello', access: 'controllers' },
    ],
    outputs: ['GreetingStatuses.hello.example.com'], capabilities: ['CAP_NET_BIND_SERVICE'],
    memoryBytes: 64 << 20, cpuPercent: 50, ready: { kind: 'plugin' }, workingDir: '/', volumes: [], critical: false,
    after: [], devices: [],
  });
  const least = parseManifest('name: x\nversion: "1"\nexecutable: /bin/x\n');
  t.same(least.manifest, {
    name: 'x', version: '1', description: '', executable: '/bin/x', args: [], env: {}, types: [], outputs: [],
    capabilities: [], ready: { kind: 'plugin' }, workingDir: '/', volumes: [], critical: false, after: [], devices: [],
  }, 'the least: no types, no outputs, no capabilities, no limits of its own; a plugin, started in /');
});

t.test('every problem, each named by its key', async (t) => {
  const r = parseManifest(`
name: Hello_Python
executable: usr/bin/python3
args: /plugin/main.py
env: {COSI_PLUGIN_SOCKET: /tmp/x, "1BAD": y}
types:
  - type: Greeting.hello.example.com
    defaultNamespace: Hello
    sensitive: maybe
    colour: red
  - just a string
outputs: [nope]
capabilities: [CAP_SYS_ADMIN, CAP_MAKE_COFFEE]
memory: lots
cpu: half
colour: blue
`);
  t.equal(r.manifest, undefined);
  t.same(r.problems, [
    'version: required',
    'name: must be lowercase letters, digits and dashes, at most 63, got "Hello_Python"',
    'args: must be a list, got "/plugin/main.py"',
    'types[0].defaultNamespace: must be a lowercase name (letters, digits, dashes), got "Hello"',
    'types[0].sensitive: must be true or false, got "maybe"',
    'types[0].colour: unknown field (known: type, defaultNamespace, aliases, printColumns, sensitive, schema, access)',
    'types[1]: must be a mapping, got "just a string"',
    'cpu: must be a percentage of one CPU, such as 50%, got "half"',
    'colour: unknown field (known: name, version, description, executable, args, env, types, outputs, capabilities, '
      + 'memory, cpu, ready, workingDir, after, devices, critical, volumes)',
    'executable "usr/bin/python3": must be an absolute path inside the extension (e.g. /usr/bin/python3)',
    'env.COSI_PLUGIN_SOCKET: COSI_ and APPLIANCE_ variables are the engine\'s',
    'env.1BAD: not a variable name',
    'types[0].type "Greeting.hello.example.com": the name should be plural (Widgets, not Widget)',
    'outputs: "nope": missing suffix (expected <PluralName>.<dns.suffix>, e.g. Widgets.example.com)',
    'capabilities: CAP_SYS_ADMIN: not granted to extensions: it is nearly all of root (mounts, namespaces, devices)',
    `capabilities: "CAP_MAKE_COFFEE" is not one the engine grants (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_KILL, `
      + 'CAP_NET_BIND_SERVICE, CAP_NET_BROADCAST, CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_CHROOT, '
      + 'CAP_SYS_RESOURCE, CAP_SYS_TIME)',
    'memory "lots": want a size from 4MiB to 1PiB, such as 64MiB',
  ]);
});

t.test('paths, duplicates, limits and text that is no manifest at all', async (t) => {
  const base = 'name: x\nversion: "1"\n';
  t.same(parseManifest(`${base}executable: /usr/../bin/sh\n`).problems,
    ['executable "/usr/../bin/sh": may not hold . or .. segments']);
  t.same(parseManifest(`${base}executable: /bin/x\ntypes: [{type: Widgets.example.com, defaultNamespace: a}, `
    + '{type: Widgets.example.com, defaultNamespace: a}]\n').problems, ['types: a type is defined twice']);
  for (const memory of ['1MiB', '">= 64MiB"', '99999999TiB']) {
    t.same(parseManifest(`${base}executable: /bin/x\nmemory: ${memory}\n`).problems,
      [`memory "${memory.replace(/"/g, '')}": want a size from 4MiB to 1PiB, such as 64MiB`]);
  }
  t.same(parseManifest(`${base}executable: /bin/x\ntypes: [{type: Widgets.example.com, defaultNamespace: a, `
    + 'schema: {type: nope}}]\n').problems,
  ['types[0].schema.type: must be one of object, string, integer, number, boolean, array, any, got "nope"']);
  const ready = (r: string) => parseManifest(`${base}executable: /bin/x\nready: "${r}"\nworkingDir: /srv\n`);
  t.same(ready('started').manifest?.ready, { kind: 'started' }, 'a program that says nothing: running once started');
  t.same(ready('tcp:8080').manifest?.ready, { kind: 'tcp', port: 8080 });
  t.same(ready('http:8080').manifest?.ready, { kind: 'http', port: 8080, path: '/' });
  t.same(ready('http:80/healthz?full=1').manifest?.ready, { kind: 'http', port: 80, path: '/healthz?full=1' });
  t.equal(ready('started').manifest?.workingDir, '/srv');
  t.same(ready('tcp:0').problems,
    ['ready "tcp:0": want plugin, started, tcp:PORT or http:PORT/PATH (a port 1-65535)']);
  t.same(ready('tcp:99999').problems,
    ['ready "tcp:99999": want plugin, started, tcp:PORT or http:PORT/PATH (a port 1-65535)']);
  for (const bad of ['tcp:80/x', 'udp:53']) {
    t.same(ready(bad).problems, [`ready: must be plugin, started, tcp:PORT or http:PORT/PATH, got "${bad}"`]);
  }
  t.same(parseManifest(`${base}executable: /bin/x\nworkingDir: srv\n`).problems,
    ['workingDir "srv": must be an absolute path inside the extension (e.g. /usr/bin/python3)']);
  t.match(parseManifest('name: [').problems, [/^not YAML: /]);
  t.same(parseManifest('- a list').problems, ['want a mapping with name, version, executable, ...']);
  t.same(parseManifest('').problems, ['want a mapping with name, version, executable, ...']);
});

t.test('volumes: named, each on a path of its own outside the launcher\'s mounts, a size from 1MiB', async (t) => {
  const base = 'name: x\nversion: "1"\nexecutable: /bin/x\n';
  t.same(parseManifest(`${base}volumes: [{name: data, path: /var/lib/x/, size: 100MiB}, {name: cache, path: /srv}]\n`)
    .manifest?.volumes, [{ name: 'data', path: '/var/lib/x', sizeBytes: 100 << 20 }, { name: 'cache', path: '/srv' }]);
  t.same(parseManifest(`${base}volumes:
  - {name: data, path: /srv}
  - {name: data, path: /srv/inner}
  - {name: tmp, path: /tmp/x}
  - {name: top, path: /}
  - {name: up, path: /a/../b}
  - {name: rel, path: srv2}
  - {name: small, path: /s, size: 100KiB}
`).problems, [
    'volumes[1].name "data": another volume has that name',
    'volumes[1].path "/srv/inner": is, holds or lies in another volume\'s path',
    'volumes[2].path "/tmp/x": is under /proc, /dev, /tmp, /run, which the launcher mounts',
    'volumes[3].path "/": is the root: a volume is mounted on a directory in it',
    'volumes[4].path "/a/../b": may not hold . or .. segments',
    'volumes[5].path "srv2": must be an absolute path inside the extension (e.g. /usr/bin/python3)',
    'volumes[6].size "100KiB": want a size from 1MiB to 1PiB, such as 100MiB',
  ]);
  t.match(parseManifest(`${base}volumes: [{name: Bad, path: /b}, {name: nopath}]\n`).problems,
    [/^volumes\[0\]\.name: must be lowercase letters/, /^volumes\[1\]\.path: required/]);
});

t.test('critical and after: what must be so before it starts, never itself, each once', async (t) => {
  const base = 'name: web\nversion: "1"\nexecutable: /bin/x\n';
  t.match(parseManifest(`${base}critical: true\nafter: [network, time, db]\n`).manifest,
    { critical: true, after: ['network', 'time', 'db'] });
  t.same(parseManifest(`${base}after: [web, db, db, Not_A_Name]\ncritical: "yes"\n`).problems, [
    'after[3]: must be network, time or an extension\'s name, got "Not_A_Name"',
    'critical: must be true or false, got "yes"',
  ]);
  t.same(parseManifest(`${base}after: [web, db, db]\n`).problems,
    ['after: a name is given twice', 'after: "web" is the extension itself']);
});

t.test('devices: paths under /dev, not the ones every extension has, each once', async (t) => {
  const base = 'name: web\nversion: "1"\nexecutable: /bin/x\n';
  t.same(parseManifest(`${base}devices: [/dev/ttyS1, /dev/serial/by-id/usb-FTDI:1]\n`).manifest?.devices,
    ['/dev/ttyS1', '/dev/serial/by-id/usb-FTDI:1']);
  t.same(parseManifest(`${base}devices: [/dev/../etc/x, /dev/null, /dev/ttyS1, /dev/ttyS1]\n`).problems, [
    'devices: "/dev/../etc/x" may not hold .. segments', 'devices: "/dev/null" is in every extension\'s /dev already',
    'devices: a device is given twice',
  ]);
  t.match(parseManifest(`${base}devices: [/etc/passwd]\n`).problems, [/^devices\[0\]: must be a path under \/dev/]);
});

t.test('what would reach into the engine is refused', async (t) => {
  const r = parseManifest(`name: sly
version: "1.0 beta"
description: "two\\nlines"
executable: /bin/x
env: {APPLIANCE_NATIVE: /evil.node, COSI_PLUGIN_OWN_MOUNTS: "1"}
types: [{type: PluginStatuses.runtime.appliance.dev, defaultNamespace: runtime}]
outputs: [ResourceDefinitions.meta.cosi.dev, PowerRequests.runtime.appliance.dev, ApiLimits.security.appliance.dev,
  AddressSpecs.net.appliance.dev]
capabilities: [toString, __proto__]
`);
  t.same(r.problems, [
    'version: must be letters, digits and . + _ ~ -, at most 64 (e.g. 1.2.0), got "1.0 beta"',
    'description: must be one line of at most 200, got "two\\nlines"',
    'env.APPLIANCE_NATIVE: COSI_ and APPLIANCE_ variables are the engine\'s',
    'env.COSI_PLUGIN_OWN_MOUNTS: COSI_ and APPLIANCE_ variables are the engine\'s',
    'types[0].type "PluginStatuses.runtime.appliance.dev": the cosi.dev and appliance.dev groups are the machine\'s',
    'outputs: "ResourceDefinitions.meta.cosi.dev": the machine\'s own state is written by the engine only',
    'outputs: "PowerRequests.runtime.appliance.dev": the machine\'s own state is written by the engine only',
    'outputs: "ApiLimits.security.appliance.dev": the machine\'s own state is written by the engine only',
    `capabilities: "toString" is not one the engine grants (${CAPS})`,
    `capabilities: "__proto__" is not one the engine grants (${CAPS})`,
  ], 'an address spec may be an output (checked against the machine when admitted); the engine\'s state not');
});

t.test('the same checks on fields given as a value, each problem under the path given (an appliance definition)',
  async (t) => {
    const r = checkManifest({ name: 'web', version: '1', executable: 'sbin/lighttpd', cpu: '0%', extra: 1 },
      'extensions[2]');
    t.same(r.problems, [
      'extensions[2].extra: unknown field (known: name, version, description, executable, args, env, types, outputs, '
        + 'capabilities, memory, cpu, ready, workingDir, after, devices, critical, volumes)',
      'extensions[2].executable "sbin/lighttpd": must be an absolute path inside the extension (e.g. /usr/bin/python3)',
      'extensions[2].cpu "0%": want a percentage of one CPU, such as 50%',
    ]);
    t.same(checkManifest('web', 'extensions[0]').problems,
      ['extensions[0]: want a mapping with name, version, executable, ...']);
    t.same(validateSpec(MANIFEST_SCHEMA, { name: 'x', version: '1', executable: '/x' }), [],
      'the schema alone takes the least manifest');
  });

t.test('the JSON Schema editors get, from the same schema: the field\'s validator takes a good manifest, not a bad one',
  async (t) => {
    // The published file (docs/schemas, generated from MANIFEST_SCHEMA; scripts/gen-docs.test.ts says when stale).
    const file = new URL('../../docs/schemas/extension-manifest.schema.json', import.meta.url);
    const check = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(file, 'utf8')));
    t.ok(check(YAML.parse(GOOD)), 'the good manifest');
    t.notOk(check({ name: 'Hello_Python', version: '1', executable: '/x' }), 'a name against its pattern');
    t.notOk(check({ name: 'x', version: '1', executable: '/x', colour: 'blue' }), 'an unknown key');
    t.notOk(check({ name: 'x', executable: '/x' }), 'no version');
  });
