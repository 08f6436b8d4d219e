// young-garbage: a collection of V8's young generation on demand, for byte work in PID 1 on small machines.
// A Buffer's memory is given back only when V8 collects the small object holding it, and V8 collects by the JS
// heap's growth, not by Buffers' bytes: it lets some 64 MB of them gather first. Streaming a disk through fresh
// 1 MiB buffers (gunzip's output) grew PID 1 by about 60 MB on a 256 MiB machine, which then evicted its
// programs' pages and stopped answering for seconds. A young collection is milliseconds: the buffers just used
// are young. V8's gc function is exposed once, through a new context's global: the main context never gets a
// global gc, though contexts and workers made later do (the flag is the process's).
import { lazyV8 } from './lazy-builtins.ts';
import { runInNewContext } from 'node:vm';

type Gc = (o: { type: 'minor' | 'major' }) => void;
let gc: Gc | undefined;

export function collectYoungGarbage(): void {
  if (!gc) {
    lazyV8().setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as Gc;
  }
  gc({ type: 'minor' });
}
