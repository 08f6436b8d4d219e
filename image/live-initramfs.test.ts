// live-initramfs: the build's initramfs kept byte for byte, the payload a second compressed archive after it, as
// the kernel unpacks them (zstd and our cpio reader show what it will find).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeCpio } from './cpio.ts';
import { writeCompressed } from './initramfs.ts';
import { liveInitramfs } from './live-initramfs.ts';

t.test('the payload appended under /appliance; the base untouched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'live-initramfs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const base = join(dir, 'base.cpio.zst');
  await writeCompressed([{ type: 'file', path: 'init', mode: 0o755, data: Buffer.from('stage0'), mtime: 0 }], base);
  mkdirSync(join(dir, 'payload'));
  writeFileSync(join(dir, 'payload', 'appliance.json'), '{"name":"x"}\n');
  writeFileSync(join(dir, 'payload', 'extension-web.squashfs'), Buffer.alloc(5000, 7));
  const l = await liveInitramfs(base, join(dir, 'payload'), join(dir, 'live.cpio.zst'), 86400);
  const bytes = readFileSync(l.file);
  const baseBytes = readFileSync(base);
  t.same(bytes.subarray(0, baseBytes.length), baseBytes, 'the build\'s initramfs first, as it was');
  t.equal(bytes.length, baseBytes.length + l.addedBytes);
  t.equal(l.unpackedBytes, 5013, 'what RAM holds: the payload\'s files');
  const tail = execFileSync('zstd', ['-dc'], { input: bytes.subarray(baseBytes.length) });
  const entries = decodeCpio(tail);
  t.same(entries.map((e) => e.path), ['appliance', 'appliance/appliance.json', 'appliance/extension-web.squashfs']);
  t.equal(entries[1]!.data?.toString(), '{"name":"x"}\n');
  const whole = execFileSync('zstd', ['-dc'], { input: bytes });
  t.ok(whole.includes(Buffer.from('TRAILER!!!')) && whole.indexOf('appliance/appliance.json') > whole.indexOf('init'),
    'one stream of two archives, as the kernel reads it');
});
