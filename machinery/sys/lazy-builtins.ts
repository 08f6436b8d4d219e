// lazy-builtins: Node modules loaded at their first use, not with the module that uses them. A plugin of the image
// runs in a process of its own (the process rule) and holds for good what it loaded at its start: node:crypto is
// 2 MiB in every process that loads it, node:zlib 0.5 (RSS over a process with node:net, host, Node 24), and a
// plugin needs them only for some of its work: DHCPv6, a file or a config to hash, gzip'd userdata, a GPT to read or
// write (ARCHITECTURE.md, "A bundle per plugin"); node:dgram and node:dns/promises cost the time plugin ~12 ms of its
// start, for its first query of a time server; node:v8 (its serializer and heap tools) is wanted only to turn on a
// V8 flag, for an id query's regexp or a young collection (cosi/state/query.ts, below machinery, loads it itself).
// image/bundle.ts refuses a plugin bundle that loads them at start.
// process.getBuiltinModule: Node 20.16 and 22.3 (package.json's engines).
/** What a plugin's bundle must not load at its start (image/bundle.ts checks): these and what they load. */
export const LOADED_AT_FIRST_USE = [
  'node:crypto', 'node:zlib', 'node:http', 'node:https', 'node:tls', 'node:http2', 'node:dgram', 'node:dns/promises',
  'node:v8', 'node:perf_hooks',
];

/** node:crypto, loaded at the first call. */
export const lazyCrypto = (): typeof import('node:crypto') => process.getBuiltinModule('node:crypto');
/** node:zlib, loaded at the first call. */
export const lazyZlib = (): typeof import('node:zlib') => process.getBuiltinModule('node:zlib');
/** node:dgram, loaded at the first call. */
export const lazyDgram = (): typeof import('node:dgram') => process.getBuiltinModule('node:dgram');
/** node:dns/promises, loaded at the first call. */
export const lazyDnsPromises = (): typeof import('node:dns/promises') => process.getBuiltinModule('node:dns/promises');
/** node:v8, loaded at the first call. */
export const lazyV8 = (): typeof import('node:v8') => process.getBuiltinModule('node:v8');
