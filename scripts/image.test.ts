// npm run image: its arguments, and the errors that name the bad one.
import t from 'tap';
import { parseImageArgs } from './image.ts';

t.test('formats by name or all; size and seed; errors say what is wrong', async (t) => {
  t.same(parseImageArgs(['--format', 'raw,qcow2']), { formats: ['raw', 'qcow2'] });
  t.same(parseImageArgs(['--format', 'all', '--size', '1024', '--seed', 's']).formats, ['raw', 'qcow2', 'gce']);
  t.equal(parseImageArgs(['--format', 'raw', '--size', '1024']).sizeMiB, 1024);
  t.throws(() => parseImageArgs([]), /--format is required: one or more of raw, qcow2, gce, or all/);
  t.throws(() => parseImageArgs(['--format', 'raw,vhd']), /unknown format "vhd": one of raw, qcow2, gce/);
  t.throws(() => parseImageArgs(['--format', 'raw', '--size', '1.5']), /--size "1\.5": a whole number of MiB/);
  t.throws(() => parseImageArgs(['--format']), /--format needs a value/);
});
