import t from 'tap';
import { ALL_AT_ONCE, formatWaves, parseWaves, scheduleProblems, SEED_RANGE, waveTime, type Wave } from './waves.ts';

const SCHEDULE: Wave[] = [{ after: 0, percent: 10 }, { after: 6 * 3600, percent: 50 }, { after: 86400, percent: 100 }];

t.test('every seed has one time; the share of each wave is its percent', async (t) => {
  const byWave = [0, 0, 0];
  let last = -1;
  const wrong: string[] = [];
  for (let seed = 0; seed < SEED_RANGE; seed++) {
    const w = waveTime(SCHEDULE, seed);
    byWave[w.wave]!++;
    // Lower seeds never go later than higher ones: canaries first.
    if (w.after < last) wrong.push(`seed ${seed} before seed ${seed - 1}`);
    last = w.after;
    const wave = SCHEDULE[w.wave]!;
    const next = SCHEDULE[w.wave + 1];
    if (w.after < wave.after || (next && w.after >= next.after)) wrong.push(`seed ${seed} outside wave ${w.wave}`);
  }
  t.same(wrong, []);
  t.same(byWave, [205, 819, 1024], '10% of 2048 rounded up, 50% less that, the rest');
  t.same(waveTime(SCHEDULE, 0), { wave: 0, after: 0 }, 'seed 0 goes when the release is published');
  t.same(waveTime(SCHEDULE, SEED_RANGE - 1), { wave: 2, after: 86400 }, 'the last wave all at its start');
  t.same(waveTime(ALL_AT_ONCE, 1234), { wave: 0, after: 0 });
  t.throws(() => waveTime(SCHEDULE, SEED_RANGE), /seed 2048/);
  t.throws(() => waveTime(SCHEDULE, -1), /seed -1/);
});

t.test('inside a wave the machines are spread up to the next wave', async (t) => {
  const times = new Set<number>();
  for (let seed = 0; seed < 205; seed++) times.add(waveTime(SCHEDULE, seed).after);
  t.ok(times.size > 200, `wave 0's machines at ${times.size} different times, not one herd`);
  t.ok(Math.max(...times) < 6 * 3600);
});

t.test('schedules: parsed, printed, refused with the wave named', async (t) => {
  t.same(parseWaves('0h=10%,6h=50%,1d=100%'), SCHEDULE);
  t.equal(formatWaves(SCHEDULE), '0h=10%,6h=50%,1d=100%');
  t.same(parseWaves(formatWaves(SCHEDULE)), SCHEDULE, 'what is printed reads back');
  t.match((parseWaves('0h=10%,6h=50%') as Error).message, /last wave must take 100%/);
  t.match((parseWaves('6h=10%,1h=100%') as Error).message, /wave 2: opens after and takes more than wave 1/);
  t.match((parseWaves('soon=10%') as Error).message, /"soon=10%": a wave is TIME=PERCENT/);
  t.same(scheduleProblems([]), ['no waves: at least one, the last at 100%']);
  t.match(scheduleProblems([{ after: 0, percent: 0 }, { after: 1, percent: 100 }]), [/wave 1: percent 0/]);
});
