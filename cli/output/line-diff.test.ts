import t from 'tap';
import { diffLines, unifiedDiff } from './line-diff.ts';

t.test('the common lines kept, the rest marked - and +, in order', async (t) => {
  const d = diffLines(['a', 'b', 'c', 'd'], ['a', 'c', 'x', 'd']);
  t.same(d.map((l) => `${l.op}${l.text}`), [' a', '-b', ' c', '+x', ' d']);
  t.same(diffLines([], ['a']), [{ op: '+', text: 'a' }], 'all new');
  t.same(diffLines(['a'], []), [{ op: '-', text: 'a' }], 'all gone');
  t.same(diffLines(['a', 'b'], ['a', 'b']).every((l) => l.op === ' '), true, 'the same: no marks');
});

t.test('a changed line is a - then a +', async (t) => {
  t.equal(unifiedDiff('old', 'new', 'text: a\nmtu: 1\n', 'text: a\nmtu: 2\n'),
    '--- old\n+++ new\n text: a\n-mtu: 1\n+mtu: 2\n');
});
