// ExtensionTypeBook.learn: which failed fetches of an image are tried again when a user (no patience) waits.
import t from 'tap';
import { ExtensionTypeBook, type RealMachine } from './types.ts';
import { RefusedImage, type FetchedImage } from './fetch.ts';

const SPEC = { source: 'http://10.0.2.100/x.squashfs', sha256: 'e'.repeat(64) };

/** A machine whose fetches give `answers` in turn (the last one again once they run out), counting them. */
function machineAnswering(answers: Error[]): RealMachine & { fetches: number } {
  const m = {
    fetches: 0, imagesDir: '/nonexistent', mountsDir: '/nonexistent',
    mount() { throw new Error('not mounted in this test'); },
    unmount() {},
    prepareGroup: () => '',
    removeGroup: async () => {},
    fetch: async (): Promise<FetchedImage | Error> => answers[Math.min(m.fetches++, answers.length - 1)]!,
  };
  return m;
}

const reset = () => new Error(`${SPEC.source}: socket hang up`, {
  cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) });

t.test('a reset connection is tried again, and the next answer counts', async (t) => {
  const m = machineAnswering([reset(), new RefusedImage('the second answer')]);
  const got = await new ExtensionTypeBook(m).learn('x', SPEC);
  t.equal(m.fetches, 2);
  t.match(got, { message: 'the second answer' });
});

t.test('resets again and again: tried three times in all, then the reset is the answer', async (t) => {
  const m = machineAnswering([reset()]);
  const got = await new ExtensionTypeBook(m).learn('x', SPEC);
  t.equal(m.fetches, 3);
  t.match(got, { message: /socket hang up/ });
});

t.test('a refused connection is not tried again for a user', async (t) => {
  const refused = new Error(`${SPEC.source}: connect ECONNREFUSED`, {
    cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) });
  const m = machineAnswering([refused]);
  t.match(await new ExtensionTypeBook(m).learn('x', SPEC), { message: /ECONNREFUSED/ });
  t.equal(m.fetches, 1);
});

t.test('a download cut short counts as a reset', async (t) => {
  const m = machineAnswering([new Error(`${SPEC.source}: cut short: 10 of 20 bytes`), new RefusedImage('then this')]);
  t.match(await new ExtensionTypeBook(m).learn('x', SPEC), { message: 'then this' });
  t.equal(m.fetches, 2);
});
