import t from 'tap';
import { didYouMean, editDistance, nearestNames } from './did-you-mean.ts';

t.test('edits: insert, delete, replace, and a swap of neighbours each count one', async (t) => {
  t.equal(editDistance('get', 'get'), 0);
  t.equal(editDistance('gte', 'get'), 1, 'a swap');
  t.equal(editDistance('gt', 'get'), 1);
  t.equal(editDistance('gett', 'get'), 1);
  t.equal(editDistance('linkspce', 'linkspec'), 1);
  t.equal(editDistance('abc', 'xyz'), 3);
  t.equal(editDistance('', 'abc'), 3);
});

t.test('near names: a typo for the word\'s length, or the start of a name; not another word', async (t) => {
  const commands = ['get', 'apply', 'delete', 'describe', 'diff', 'edit', 'explain', 'logs', 'health'];
  t.same(nearestNames('gte', commands), ['get']);
  t.same(nearestNames('delet', commands), ['delete']);
  t.same(nearestNames('descrbie', commands), ['describe']);
  t.same(nearestNames('desc', commands), ['describe'], 'a start of a name');
  t.same(nearestNames('install', commands), [], 'nothing near: no guess');
  t.same(nearestNames('xy', commands), []);
  t.same(nearestNames('GET', commands), [], 'the word itself is no suggestion');
});

t.test('the phrase: one, several, none; aliases said as what they stand for', async (t) => {
  t.equal(didYouMean('gte', ['get', 'gt', 'set']), ' (did you mean get or gt?)');
  t.equal(didYouMean('zzzzz', ['get']), '');
  const display = new Map([['linkspec', 'linkspec'], ['linkspecs', 'linkspec'], ['ls', 'linkspec']]);
  t.equal(didYouMean('lnkspecs', display.keys(), (n) => display.get(n)!), ' (did you mean linkspec?)');
});
