// The kit with an appliance's own kernel: its bzImage, and the system image written again with that kernel's modules
// in place of the system's, everything else kept; not written again when nothing changed.
import t from 'tap';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildKernel } from '../../scripts/kernel.ts';
import { sha256File } from '../hash.ts';
import { readSystemImage, writeSystemImage } from '../system-image.ts';
import { kitWithKernel } from './kit-with-kernel.ts';
import { KIT_PARTS, openSystemKit, writeSystemKit, type OpenedKit } from './system-kit.ts';

const dir = mkdtempSync(join(tmpdir(), 'kit-with-kernel-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (path: string, text: string, mode = 0o644) =>
  ({ type: 'file' as const, path, mode, data: Buffer.from(text), uid: 0, gid: 0 });
const paths = Object.fromEntries(KIT_PARTS.map((p) => [p, join(dir, p)])) as OpenedKit['paths'];
for (const p of KIT_PARTS) writeFileSync(paths[p], `${p} bytes`);
const compression = { compressor: 'zstd' as const, level: 1, blockSize: '32K' };
writeSystemImage([file('init', 'PID 1', 0o755), file('lib/libc.so.6', 'libc', 0o755),
  file('lib/modules/0.0-old/kernel/old.ko', 'old module'), file('lib/modules/0.0-old/modules.dep', '')],
paths.systemImage, 0, compression);
await writeSystemKit(dir, { version: '1', commit: 'c', cmdline: '', topLevelDirs: ['lib'], modules: ['old'],
  kernel: { key: 'system', source: 's', release: '0.0-old' }, compression, paths });
const kit = await openSystemKit(dir);
const kernel = await buildKernel(); // a cache hit: the build made it

t.test('the kernel\'s bzImage, config and modules; the rest of the system image as it was', async (t) => {
  const out = join(dir, 'out');
  const own = await kitWithKernel(kit, kernel, { dir: out, epoch: 0, progress: () => undefined });
  t.equal(own.paths.vmlinuz, kernel.bzImage);
  t.equal(own.files.vmlinuz.sha256, await sha256File(kernel.bzImage), 'described as the kit describes its parts');
  t.equal(own.paths.kernelConfig, kernel.config);
  t.same(own.kernel, { key: kernel.key, source: 's', release: kernel.release });
  t.ok(own.modules.includes('dummy') && !own.modules.includes('old'), 'the kernel\'s modules listed');
  t.equal(own.paths.stage0, kit.paths.stage0, 'stage0 is the system\'s');
  const files = readSystemImage(own.paths.systemImage);
  const names = files.map((e) => e.path);
  t.ok(names.includes('init') && names.includes('lib/libc.so.6'), 'PID 1 and its libraries kept');
  const init = files.find((e) => e.path === 'init');
  t.equal(init?.type === 'file' && init.mode, 0o755, 'with their modes');
  t.notOk(names.some((n) => n.includes('0.0-old')), 'the system kernel\'s modules gone');
  t.ok(names.includes(`lib/modules/${kernel.release}/modules.dep`), 'the kernel\'s modules.dep');
  t.ok(names.some((n) => n.endsWith('/dummy.ko')), 'and its modules');
  const written = statSync(own.paths.systemImage).mtimeMs;
  const again = await kitWithKernel(kit, kernel, { dir: out, epoch: 0, progress: () => undefined });
  t.equal(statSync(again.paths.systemImage).mtimeMs, written, 'the same inputs: not written again');
  t.same(again.files, own.files);
});
