// npm run image: its arguments, and the errors that name the bad one.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDefinition } from '../image/appliance/definition.ts';
import { imageCmdline, OWN_DEFINITION, parseImageArgs } from './image.ts';
import { ROOT } from './lib/paths.ts';

t.test('formats by name or all; size and seed; errors say what is wrong', async (t) => {
  t.same(parseImageArgs(['--format', 'raw,qcow2']), { formats: ['raw', 'qcow2'] });
  t.same(parseImageArgs(['--format', 'all', '--size', '1024', '--seed', 's']).formats,
    ['raw', 'qcow2', 'iso', 'aws', 'gce', 'pxe', 'upgrade', 'upgrade-self-contained']);
  t.equal(parseImageArgs(['--format', 'raw', '--size', '1024']).sizeMiB, 1024);
  const all = 'raw, qcow2, iso, aws, gce, pxe, upgrade, upgrade-self-contained';
  t.throws(() => parseImageArgs([]), new RegExp(`--format is required: one or more of ${all}, or all`));
  t.throws(() => parseImageArgs(['--format', 'raw,vhd']), new RegExp(`unknown format "vhd": one of ${all}`));
  t.equal(parseImageArgs(['--format', 'upgrade', '--signing-key', 'k.pem']).signingKey, 'k.pem');
  t.throws(() => parseImageArgs(['--format', 'upgrade', '--signing-key']), /--signing-key needs a value/);
  t.throws(() => parseImageArgs(['--format', 'raw', '--size', '1.5']), /--size "1\.5": a whole number of MiB/);
  t.throws(() => parseImageArgs(['--format']), /--format needs a value/);
});

t.test('the command line: the build\'s, replaced or added to, one line', async (t) => {
  const built = 'console=ttyS0 quiet\n';
  t.equal(imageCmdline(built, {}), 'console=ttyS0 quiet');
  t.equal(imageCmdline(built, parseImageArgs(['--format', 'pxe', '--append', 'appliance.config=http://x/c'])),
    'console=ttyS0 quiet appliance.config=http://x/c');
  t.equal(imageCmdline(built, parseImageArgs(['--format', 'raw', '--cmdline', 'console=ttyS1'])), 'console=ttyS1');
  t.throws(() => parseImageArgs(['--format', 'raw', '--cmdline', 'a', '--append', 'b']), /give one/);
  t.throws(() => parseImageArgs(['--format', 'raw', '--append', 'a\nb']), /--append: the command line is one line/);
});

t.test('this repository\'s own appliance: valid, nothing added, the package\'s version', async (t) => {
  const r = await loadDefinition(OWN_DEFINITION);
  t.same(r.problems, []);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  t.equal(r.definition?.version, pkg.version, `${OWN_DEFINITION}'s version is package.json's: move both`);
  t.equal(r.definition?.name, pkg.name);
  t.same([r.definition?.extensions, r.definition?.config.text, r.definition?.kernel.args], [[], '', []],
    'the system as it is: its images carry no payload');
});
