// lazy-builtins: Node modules loaded at their first use, not with the module that uses them. A plugin of the image
// runs in a process of its own (the process rule) and holds for good what it loaded at its start: node:crypto is
// 2 MiB in every process that loads it, node:zlib 0.5 (RSS over a process with node:net, host, Node 24), and most
// plugins of most machines never hash or inflate anything (ARCHITECTURE.md, "A bundle per plugin").
/** node:crypto, loaded at the first call. */
export const lazyCrypto = (): typeof import('node:crypto') => process.getBuiltinModule('node:crypto');
/** node:zlib, loaded at the first call. */
export const lazyZlib = (): typeof import('node:zlib') => process.getBuiltinModule('node:zlib');
