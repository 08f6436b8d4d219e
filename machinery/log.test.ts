// log: the throttle that keeps what any client can repeat from flooding the console.
import t from 'tap';
import { throttle } from './log.ts';

t.test('one line per reason per window; the next says how many were left out', async (t) => {
  let now = 0;
  const once = throttle(60_000, () => now);
  const lines: string[] = [];
  const say = (reason: string) => once(reason, (more) => lines.push(`${reason}${more}`));
  say('ECONNRESET');
  say('ECONNRESET');
  say('ECONNRESET');
  say('EPROTO');
  t.same(lines, ['ECONNRESET', 'EPROTO'], 'each reason once, at once');
  now = 59_999;
  say('ECONNRESET');
  t.equal(lines.length, 2, 'still inside the window');
  now = 60_000;
  say('ECONNRESET');
  t.equal(lines[2], 'ECONNRESET (and 3 more like it in 60 s, not shown)');
  now = 130_000;
  say('ECONNRESET');
  t.equal(lines[3], 'ECONNRESET', 'nothing left out this time');
});
