import t from 'tap';
import { OneAtATime } from './one-at-a-time.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

t.test('jobs of a key run one after another, in order, even after a failure; keys apart run together', async (t) => {
  const q = new OneAtATime();
  const log: string[] = [];
  const job = (name: string, fail = false) => async () => {
    log.push(`${name} start`);
    await tick();
    log.push(`${name} end`);
    if (fail) throw new Error(`${name} failed`);
    return name;
  };
  const a1 = q.run('a', job('a1', true));
  const a2 = q.run('a', job('a2'));
  const b1 = q.run('b', job('b1'));
  await t.rejects(a1, /a1 failed/, 'a failure is its caller\'s');
  t.equal(await a2, 'a2', 'the next job runs all the same');
  t.equal(await b1, 'b1');
  t.same(log.filter((l) => l.startsWith('a')), ['a1 start', 'a1 end', 'a2 start', 'a2 end'], 'never overlapping');
  t.ok(log.indexOf('b1 start') < log.indexOf('a1 end'), 'another key does not wait');
  q.run('c', job('c1'));
  await q.settled();
  t.ok(log.includes('c1 end'), 'settled waits for what is queued');
  await tick();
  t.equal(q.busy, 0, 'finished keys are forgotten');
});
