// runtime-support: the Node our executables embed is an LTS line within its support today, by the rule of
// scripts/lib/node-lines.ts (tested below on the cases it refuses).
import t from 'tap';
import { pinnedVersion } from '../scripts/runtime.ts';
import { unsupportedBecause } from '../scripts/lib/node-lines.ts';

t.test('the pinned runtime is an LTS line within its support today', async (t) => {
  const today = new Date().toISOString().slice(0, 10);
  t.equal(unsupportedBecause(pinnedVersion(), today), undefined, `runtime/package-lock.json pins ${pinnedVersion()}`);
});

t.test('unknown lines, lines before their LTS and past their end are refused, saying so', async (t) => {
  t.match(unsupportedBecause('20.20.2', '2026-11-27'), /line 20 reached its end of life on 2026-04-30/);
  t.equal(unsupportedBecause('20.20.2', '2026-04-30'), undefined, 'the last day still counts');
  t.match(unsupportedBecause('25.9.0', '2026-01-01'), /no line in scripts\/lib\/node-lines.ts/);
  t.match(unsupportedBecause('v26.1.0', '2026-06-01'), /line 26 is no LTS until 2026-10-20/);
  t.equal(unsupportedBecause('v26.12.1', '2026-11-27'), undefined);
  t.equal(unsupportedBecause('24.21.0', '2026-11-27'), undefined);
});
