import t from 'tap';
import { collectYoungGarbage } from './young-garbage.ts';

const arrayBuffersMB = () => process.memoryUsage().arrayBuffers / 2 ** 20;

t.test('fresh buffers passed by are given back as they go, not once 64 MB of them have gathered', async (t) => {
  collectYoungGarbage();
  const base = arrayBuffersMB();
  let peak = 0;
  let last: Buffer | undefined;
  for (let i = 0; i < 96; i++) {
    last = Buffer.allocUnsafe(1 << 20).fill(i);
    if (i % 8 === 7) collectYoungGarbage();
    peak = Math.max(peak, arrayBuffersMB() - base);
  }
  t.equal(last!.length, 1 << 20);
  // 96 MiB passed by; with a young collection every 8 MiB, what is held stays near that much.
  t.ok(peak < 32, `at most ${peak.toFixed(0)} MiB of buffers held at once (96 MiB passed by)`);
});
