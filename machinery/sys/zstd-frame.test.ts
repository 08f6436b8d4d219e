// The frame header's content size, read from what the real zstd tool writes: each field width it picks by the size
// (1, 2, 4 and 8 bytes), and the frames that declare none (from a pipe, or told not to).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdContentSize, ZSTD_HEADER_MAX } from './zstd-frame.ts';

const dir = mkdtempSync(join(tmpdir(), 'zstd-frame-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const head = (file: string) => readFileSync(file).subarray(0, ZSTD_HEADER_MAX);

t.test('the size the zstd tool declares for a file, whatever the width of its field', async (t) => {
  for (const size of [0, 200, 300, 70_000, 5 << 30]) {
    const file = join(dir, `f${size}`);
    writeFileSync(file, '');
    truncateSync(file, size); // sparse: 5 GiB of zeros compresses to little and needs the 8-byte field
    execFileSync('zstd', ['-q', '-f', '-1', file, '-o', `${file}.zst`]);
    t.same(zstdContentSize(head(`${file}.zst`)), { size }, `${size} bytes`);
  }
});

t.test('frames that declare none, and what is not a frame', async (t) => {
  const piped = execFileSync('zstd', ['-q', '-c', '-'], { input: Buffer.alloc(1000, 7) });
  t.match(zstdContentSize(piped.subarray(0, ZSTD_HEADER_MAX)), { why: /does not declare its content size/ },
    'from a pipe');
  const file = join(dir, 'nosize');
  writeFileSync(file, Buffer.alloc(1000, 7));
  execFileSync('zstd', ['-q', '-f', '--no-content-size', file, '-o', `${file}.zst`]);
  t.match(zstdContentSize(head(`${file}.zst`)), { why: /does not declare/ }, '--no-content-size');
  t.match(zstdContentSize(Buffer.from('hsqs and more bytes')), { why: /not a zstd frame/ });
  t.match(zstdContentSize(head(`${join(dir, 'f70000')}.zst`).subarray(0, 6)), { why: /cut short \(6 bytes\)/ });
});
