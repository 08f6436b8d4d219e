import t from 'tap';
import { decideUpdate, windowOpens, type UpdateFacts } from './update-decision.ts';

const release = { name: 'web', version: '1.2.0', published: '2026-11-29T10:00:00Z',
  waves: [{ after: 0, percent: 10 }, { after: 3600, percent: 100 }] };
const channel = { release: 'releases/web-1.2.0.tar', paused: false, changed: '2026-11-29T10:00:00Z',
  note: 'added 1.2.0' };
const facts: UpdateFacts = { running: '1.1.0', channel: 'stable', offered: { channel, release }, failedVersions: [],
  seed: 0, now: new Date('2026-11-29T10:00:05Z'), window: '', mode: 'auto' };

t.test('what a machine does with what its channel offers', async (t) => {
  t.match(decideUpdate(facts), { act: true, reason: 'upgrading to 1.2.0 (wave 0)' });
  t.match(decideUpdate({ ...facts, running: '1.2.0' }), { act: false, state: 'up-to-date',
    reason: '1.2.0 runs; channel stable offers 1.2.0' });
  t.match(decideUpdate({ ...facts, running: '1.3.0' }), { act: false, state: 'up-to-date' }, 'never down by itself');
  t.match(decideUpdate({ ...facts, offered: undefined }), { state: 'up-to-date',
    reason: 'the repository has no channel stable' });
  t.match(decideUpdate({ ...facts, offered: { channel: { ...channel, release: '' } } }), { state: 'up-to-date',
    reason: 'channel stable offers nothing' });
  t.match(decideUpdate({ ...facts, failedVersions: ['1.2.0'] }), { act: false, state: 'waiting',
    reason: /1\.2\.0 failed its try on this machine: not tried again/ });
  t.match(decideUpdate({ ...facts, offered: { channel, release: { ...release, minFromVersion: '1.1.5' } } }),
    { act: false, reason: /installed over 1\.1\.5 or later; 1\.1\.0 runs/ });
  t.match(decideUpdate({ ...facts, offered: { channel: { ...channel, paused: true, note: 'paused' }, release } }),
    { act: false, state: 'waiting', reason: /channel stable is paused \(paused at/ });
  t.match(decideUpdate({ ...facts, mode: 'notify' }), { act: false, state: 'available' });
});

t.test('a machine waits for its wave, then for the window', async (t) => {
  const late = decideUpdate({ ...facts, seed: 2047 });
  t.match(late, { act: false, state: 'waiting',
    reason: 'wave 1 (seed 2047) takes 1.2.0 from 2026-11-29T11:00:00.000Z' });
  t.same(late.wave, { wave: 1, opens: new Date('2026-11-29T11:00:00Z') });
  t.match(decideUpdate({ ...facts, seed: 2047, now: new Date('2026-11-29T11:00:00Z') }), { act: true });
  t.match(decideUpdate({ ...facts, window: '02:00-04:00' }), { act: false,
    reason: 'outside the maintenance window 02:00-04:00 UTC (opens 2026-11-30T02:00:00.000Z)' });
  t.match(decideUpdate({ ...facts, window: '09:30-10:30' }), { act: true });
});

t.test('the waves count from when the channel began offering the release', async (t) => {
  // Promoted to this channel an hour after it was published: wave 1 opens an hour after that.
  const promoted = { ...channel, since: '2026-11-29T11:00:00Z' };
  t.match(decideUpdate({ ...facts, seed: 2047, offered: { channel: promoted, release },
    now: new Date('2026-11-29T11:30:00Z') }), { act: false, reason: /from 2026-11-29T12:00:00\.000Z$/,
    wake: new Date('2026-11-29T12:00:00Z') });
  t.match(decideUpdate({ ...facts, window: '02:00-04:00' }), { wake: new Date('2026-11-30T02:00:00Z') },
    'waiting for the window: woken when it opens');
});

t.test('windows: inside, later today, tomorrow, across midnight', async (t) => {
  const at = (s: string) => new Date(`2026-11-29T${s}:00Z`);
  t.equal(windowOpens('', at('12:00')), null);
  t.same(windowOpens('02:00-04:00', at('03:00')), at('03:00'));
  t.same(windowOpens('02:00-04:00', at('01:00')), at('02:00'));
  t.same(windowOpens('02:00-04:00', at('04:00')), new Date('2026-11-30T02:00:00Z'), 'the end is outside');
  t.same(windowOpens('22:00-02:00', at('23:30')), at('23:30'));
  t.same(windowOpens('22:00-02:00', at('01:59')), at('01:59'));
  t.same(windowOpens('22:00-02:00', at('12:00')), at('22:00'));
});
