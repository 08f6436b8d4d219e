// FileSpec through the merge and spec controllers, on a temporary root: written with its
// mode, a higher layer wins, what was there before comes back, nothing outside /run, /var, /tmp.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerHarness } from '../../../cosi/conformance/controller-harness.ts';
import { builtinCodecs } from '../../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../../index.ts';
import { fileMergeController } from './file-merge.ts';
import { filePath, fileSpecController } from './file-spec.ts';
import { FILE_SPEC_TYPE, FILE_SPEC_STATUS_TYPE, SYSTEM_NS } from '../../../proto/gen/resource-types.ts';

t.test('paths: only files under /run, /var and /tmp', async (t) => {
  t.equal(filePath('/run/app/x.conf', '/r'), '/r/run/app/x.conf');
  for (const bad of ['/etc/passwd', '/run', '/run/', '/var/../etc/x', '/tmp/./x', 'run/x']) {
    t.throws(() => filePath(bad, '/'), /not a file under \/run, \/var or \/tmp/, bad);
  }
});

t.test('written with its mode; a higher layer wins; deleted: what was there before comes back', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'files-'));
  mkdirSync(join(root, 'var', 'lib'), { recursive: true });
  writeFileSync(join(root, 'var', 'lib', 'seed'), 'from the image\n', { mode: 0o600 });
  const h = await controllerHarness(t, [fileMergeController(), fileSpecController(root)], {
    codecs: builtinCodecs(builtinTypes()),
  });
  const p = (id: string) => ({ namespace: SYSTEM_NS, type: FILE_SPEC_TYPE, id });
  await h.create(p('app'), { path: '/run/app/settings.json', content: '{"debug": false}', mode: '0640' });
  const file = join(root, 'run', 'app', 'settings.json');
  await h.until(() => existsSync(file), true);
  t.equal(readFileSync(file, 'utf8'), '{"debug": false}');
  t.equal(statSync(file).mode & 0o777, 0o640, 'its mode');
  const status = (id: string) => h.spec<Record<string, unknown>>({ namespace: SYSTEM_NS, type: FILE_SPEC_STATUS_TYPE,
    id });
  t.match(await status('/run/app/settings.json'), { state: 'applied', size: 16 });
  await h.create(p('platform-seed'), { path: '/var/lib/seed', content: 'cGxhdGZvcm0=', encoding: 'base64',
    layer: 'platform' });
  await h.create(p('mine'), { path: '/var/lib/seed', content: 'mine' });
  const seed = join(root, 'var', 'lib', 'seed');
  t.equal(await h.until(() => readFileSync(seed, 'utf8'), 'mine'), 'mine', 'config over platform');
  await h.remove(p('mine'));
  t.equal(await h.until(() => readFileSync(seed, 'utf8'), 'platform'), 'platform', 'the platform layer again');
  await h.remove(p('platform-seed'));
  t.equal(await h.until(() => readFileSync(seed, 'utf8'), 'from the image\n'), 'from the image\n', 'put back');
  t.equal(statSync(seed).mode & 0o777, 0o600, 'with its mode');
  await h.remove(p('app'));
  t.equal(await h.until(() => existsSync(file), false), false, 'a file that was not there is removed');
});
