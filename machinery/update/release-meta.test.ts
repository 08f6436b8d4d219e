import t from 'tap';
import { channelTarget, parseChannelInfo, parseReleaseInfo, releaseTarget } from './release-meta.ts';

t.test('a release\'s custom metadata: taken whole, or every problem named', async (t) => {
  const good = { name: 'web', version: '1.2.0', published: '2026-11-29T10:00:00Z',
    waves: [{ after: 0, percent: 100 }] };
  t.same(parseReleaseInfo(good, 'releases/web-1.2.0.tar'), good);
  t.same(parseReleaseInfo({ ...good, minFromVersion: '1.0.0' }, 'x'), { ...good, minFromVersion: '1.0.0' });
  const bad = parseReleaseInfo({ name: '', version: 'one', published: 'yesterday', waves: [{ after: 0, percent: 50 }],
    minFromVersion: 7 }, 'releases/x.tar');
  t.ok(bad instanceof Error);
  t.match((bad as Error).message,
    /^releases\/x\.tar: custom metadata: name: a string; version "one"; published "yesterday"/);
  t.match((bad as Error).message, /minFromVersion 7/);
  t.match((bad as Error).message, /waves: the last wave must take 100%/);
  t.match((parseReleaseInfo(undefined, 'r') as Error).message, /r: no custom metadata/);
});

t.test('a channel\'s custom metadata', async (t) => {
  const c = { release: 'releases/web-1.2.0.tar', paused: false, changed: '2026-11-29T10:00:00Z', note: 'added 1.2.0' };
  t.same(parseChannelInfo(c, 'channels/stable.json'), c);
  t.same(parseChannelInfo({ ...c, release: '', note: undefined }, 'c'), { ...c, release: '', note: '' });
  t.match((parseChannelInfo({ ...c, release: '../etc/passwd', paused: 'no' }, 'c') as Error).message,
    /release "\.\.\/etc\/passwd": a releases\/ target or empty; paused: true or false/);
  t.equal(channelTarget('beta'), 'channels/beta.json');
  t.equal(releaseTarget('web', '1.2.0'), 'releases/web-1.2.0.tar');
});
