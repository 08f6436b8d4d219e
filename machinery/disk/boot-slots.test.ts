// boot-slots: the loader state through an upgrade's life, and what GRUB's own tool reads of it.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeSlotEnv, encodeLoaderState, encodeSlotEnv, forgetTried, loaderState, markGood, rollBack, trySlot,
} from './boot-slots.ts';
import { encodeGrubEnv } from './grubenv.ts';

t.test('a fresh disk boots A, good; an environment without our variables reads the same', async (t) => {
  const fresh = loaderState(encodeGrubEnv({}));
  t.same({ ...fresh, good: [...fresh.good] }, { defaultSlot: 'A', triesLeft: 0, good: ['A'] });
});

t.test('upgrade, try, mark good, roll back: each step as GRUB will read it', async (t) => {
  let s = loaderState(encodeLoaderState({ defaultSlot: 'A', triesLeft: 0, good: new Set(['A']) }));
  s = loaderState(encodeLoaderState(trySlot(s, 'B', 2)));
  t.equal(s.trySlot, 'B');
  t.equal(s.triesLeft, 2);
  t.same([...s.good], ['A']);
  const dir = mkdtempSync(join(tmpdir(), 'slots-'));
  const file = join(dir, 'grubenv');
  writeFileSync(file, encodeLoaderState(s));
  t.equal(execFileSync('grub-editenv', [file, 'list'], { encoding: 'utf8' }),
    'default_slot=A\ntry_slot=B\ntries_left=2\ngood_slots=A\n', 'grub-editenv lists what grub.cfg loads');
  s = loaderState(encodeLoaderState(markGood(s, 'B')));
  t.same({ ...s, good: [...s.good] }, { defaultSlot: 'B', triesLeft: 0, good: ['A', 'B'] });
  s = rollBack(s, 'B');
  t.equal(s.defaultSlot, 'A', 'the previous good slot');
  t.throws(() => trySlot(s, 'A', 1), /is the default/, 'never over the default');
  t.throws(() => trySlot(s, 'B', 4), /1 to 3 times/);
  const retried = trySlot(s, 'B', 1);
  t.notOk(retried.good.has('B'), 'a slot rewritten is not good until it says so');
  t.throws(() => rollBack(retried, 'A'), /never came up healthy/);
});

t.test('GRUB\'s fallback (tried_slot) is read, and forgotten once reported; other variables are kept', async (t) => {
  const block = encodeGrubEnv({ default_slot: 'A', tried_slot: 'B', good_slots: 'A', saved_entry: 'x' });
  const s = loaderState(block);
  t.equal(s.triedSlot, 'B');
  t.equal(s.trySlot, undefined);
  const after = encodeLoaderState(forgetTried(s), block).toString('latin1');
  t.notMatch(after, /tried_slot/);
  t.match(after, /saved_entry=x\n/);
});

t.test('slot.env: command line and version; words GRUB would read otherwise are refused', async (t) => {
  const env = encodeSlotEnv({ cmdline: 'console=ttyS0 quiet panic=-1', version: '1.2.0', commit: 'abc' });
  t.same(decodeSlotEnv(env), { cmdline: 'console=ttyS0 quiet panic=-1', version: '1.2.0', commit: 'abc' });
  for (const bad of ['a="b c"', 'x=$y', 'a\\b', "it's"]) {
    t.throws(() => encodeSlotEnv({ cmdline: bad, version: '', commit: '' }), /is not allowed/, bad);
  }
});
