import t from 'tap';
import { StartSteps } from './start-steps.ts';

t.test('each step is the time since the one before, the first since the process started', async (t) => {
  const steps = new StartSteps();
  // The clock msSinceStart reads (process.uptime): performance.now() counts from another origin, tens of ms apart
  // on a loaded host.
  const sinceStart = process.uptime() * 1000;
  steps.mark('node');
  await new Promise((r) => setTimeout(r, 60));
  steps.mark('connect');
  steps.mark('watches');
  const said = String(steps);
  const m = /^node (\d+) ms, connect (\d+) ms, watches (\d+) ms$/.exec(said);
  t.ok(m, `printed in order: ${said}`);
  t.ok(Math.abs(Number(m![1]) - sinceStart) <= 2, `node: from the process start (${sinceStart} ms on its clock)`);
  t.ok(Number(m![2]) >= 55 && Number(m![2]) < 1000, `connect: the 60 ms between its mark and the one before`);
  t.ok(Number(m![3]) <= 5, 'watches: marked at once, about nothing');
});
