// zx: zx's `$`, loaded through its CommonJS entry. Its ES module entry re-exports the CommonJS one by name, and
// under Node 24, in a process a test started (tap's loader hooks are inherited down the process tree), that name
// came through undefined: `npm start` and the variant build failed with "$ is not a function".
import { createRequire } from 'node:module';

export const { $ } = createRequire(import.meta.url)('zx') as typeof import('zx');
