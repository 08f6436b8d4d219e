// bench-logs: what the log rings cost. Fills rings of the default size (and of the sizes given)
// with lines of typical lengths and prints the heap they hold beside the text they keep, and how
// fast a ring takes lines. Heap figures come from a forced GC before and after (node --expose-gc).
//   npm run bench:logs [-- --kib 128,512]
import { LogRing, DEFAULT_RING_BYTES } from '../init/engine/log/book.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('bench-logs: run with node --expose-gc (npm run bench:logs does)\n');
  process.exit(2);
}
if (process.argv.includes('--help')) {
  process.stdout.write('usage: npm run bench:logs [-- --kib 128,512]\n'
    + '  heap held by full log rings, and lines per second\n');
  process.exit(0);
}
const kibArg = process.argv[process.argv.indexOf('--kib') + 1];
const sizes = process.argv.includes('--kib') && kibArg ? kibArg.split(',').map((k) => Number(k) * 1024)
  : [DEFAULT_RING_BYTES];
const heap = () => {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
};

for (const capacity of sizes) {
  for (const length of [40, 100, 300]) {
    const before = heap();
    const rings = Array.from({ length: 10 }, () => new LogRing(capacity));
    // Distinct strings, as real lines are (no sharing of one constant).
    for (const r of rings) for (let i = 0; r.dropped < 100; i++) r.append('info', `${i} `.padEnd(length, 'x'));
    const held = (heap() - before) / rings.length;
    const text = rings[0]!.bytes;
    const lines = rings[0]!.size;
    rings.length = 0; // let them go before the next measure
    process.stdout.write(`ring ${capacity / 1024} KiB, lines of ${length} B: ${lines} lines, `
      + `${(text / 1024).toFixed(0)} KiB charged, heap ${(held / 1024).toFixed(0)} KiB `
      + `(${(held / text).toFixed(2)}x)\n`);
  }
}
const r = new LogRing(DEFAULT_RING_BYTES);
const n = 1_000_000;
const t0 = performance.now();
for (let i = 0; i < n; i++) r.append('info', `line ${i} of a plugin that prints a lot`);
const s = (performance.now() - t0) / 1000;
process.stdout.write(`append: ${(n / s / 1e6).toFixed(2)} M lines/s (${(s * 1e9 / n).toFixed(0)} ns a line)\n`);
