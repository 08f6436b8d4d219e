import t from 'tap';
import { compareVersions } from './versions.ts';

t.test('versions compare number by number; a suffix sorts below; dev below all', async (t) => {
  t.equal(compareVersions('1.10.0', '1.9.2'), 1);
  t.equal(compareVersions('1.2', '1.2.0'), 0);
  t.equal(compareVersions('1.2.0-rc1', '1.2.0'), -1);
  t.equal(compareVersions('1.2.0', '1.2.0-rc1'), 1);
  t.equal(compareVersions('1.2.0-rc1', '1.2.0-rc2'), -1);
  t.equal(compareVersions('1.2.0-rc10', '1.2.0-rc9'), 1, 'digits in a suffix as numbers');
  t.equal(compareVersions('1.2.0-rc.2', '1.2.0-rc.2.1'), -1);
  t.equal(compareVersions('1.2.0-beta', '1.2.0-alpha'), 1);
  t.equal(compareVersions('dev', '0.0.1'), -1);
  t.equal(compareVersions('2.0.0', '2.0.0'), 0);
});
