// Kernel config fragments: the cache key reads settings only; what olddefconfig dropped is named; an appliance's
// fragment may add options and not change the system's, checked before a build and again after olddefconfig.
import t from 'tap';
import { configLines, configProblems, fragmentProblems, missingOptions, parseFragment } from './kernel-config.ts';

t.test('missingOptions names what olddefconfig dropped', async (t) => {
  t.same(
    missingOptions(
      'CONFIG_A=y\n# comment\nCONFIG_B=y\nCONFIG_C=m\nCONFIG_D=m\nCONFIG_E=m\n',
      'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\nCONFIG_D=y\n',
    ),
    ['CONFIG_B=y (got not set)', 'CONFIG_D=m (got y)', 'CONFIG_E=m (got not set)'],
  );
});

t.test('the cache key reads the settings, not the comments', async (t) => {
  const a = '# why A\nCONFIG_A=y\n\n# CONFIG_B is not set\n';
  t.equal(configLines(a), configLines('# A, reworded\nCONFIG_A=y\n# CONFIG_B is not set\n'), 'a comment reworded');
  t.not(configLines(a), configLines('CONFIG_A=y\n'), 'an option no longer turned off');
  t.not(configLines(a), configLines('CONFIG_A=m\n# CONFIG_B is not set\n'), 'an option changed');
});

t.test('a fragment is settings, comments and blank lines; anything else is named by its line', async (t) => {
  const { settings, problems } = parseFragment('# tun for the VPN\nCONFIG_TUN=m\n\n# CONFIG_X is not set\n'
    + 'TUN=m\nCONFIG_HZ=300\nCONFIG_TUN=y\n');
  t.same(settings.map((s) => [s.line, s.name, s.value]), [
    [2, 'CONFIG_TUN', 'm'], [4, 'CONFIG_X', undefined], [6, 'CONFIG_HZ', '300'], [7, 'CONFIG_TUN', 'y'],
  ]);
  t.same(problems, ['line 5: not a kernel config line: TUN=m', 'line 7: CONFIG_TUN is set already on line 2']);
});

const system = 'CONFIG_FUTEX=y\nCONFIG_DUMMY=m\n# CONFIG_DEVMEM is not set\n';

t.test('before a build: an option the system sets may not be changed, only added to', async (t) => {
  t.same(fragmentProblems('CONFIG_TUN=m\nCONFIG_FUTEX=y\n', system), [], 'new options, and the system\'s as it is');
  t.same(fragmentProblems('# CONFIG_FUTEX is not set\nCONFIG_DUMMY=y\nCONFIG_DEVMEM=y\n', system), [
    'line 1: CONFIG_FUTEX off: the system sets CONFIG_FUTEX=y and relies on it',
    'line 2: CONFIG_DUMMY=y: the system sets CONFIG_DUMMY=m and relies on it',
    'line 3: CONFIG_DEVMEM=y: the system sets CONFIG_DEVMEM off and relies on it',
  ]);
});

t.test('after olddefconfig: each setting that did not hold, and each of the system\'s undone', async (t) => {
  const final = 'CONFIG_FUTEX=y\nCONFIG_DUMMY=m\nCONFIG_TUN=m\nCONFIG_CRC32=y\n# CONFIG_WIREGUARD is not set\n';
  t.same(configProblems('CONFIG_TUN=m\n', system, final), []);
  t.same(configProblems('CONFIG_WIREGUARD=m\nCONFIG_NO_SUCH=y\n# CONFIG_CRC32 is not set\n', system, final), [
    'line 1: CONFIG_WIREGUARD=m: got not set (a dependency is off, or no such option)',
    'line 2: CONFIG_NO_SUCH=y: got not set (a dependency is off, or no such option)',
    'line 3: CONFIG_CRC32 off: another option selects it (got y)',
  ]);
  t.same(configProblems('CONFIG_TUN=m\n', system, 'CONFIG_TUN=m\nCONFIG_DUMMY=m\n'), [
    'the system\'s CONFIG_FUTEX=y (got not set): turned off through a dependency of this fragment',
  ]);
});
