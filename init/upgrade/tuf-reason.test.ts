import t from 'tap';
import { BadVersionError, DownloadHTTPError, ExpiredMetadataError } from 'tuf-js/dist/error.js';
import { LengthOrHashMismatchError, UnsignedMetadataError } from '@tufjs/models/dist/error.js';
import { tufFault, tufReason } from './tuf-reason.ts';

t.test('each refusal in TUF\'s terms, from what the libraries throw', async (t) => {
  t.equal(tufReason(new ExpiredMetadataError('Final timestamp.json is expired')),
    'expired metadata (a stale or frozen repository): Final timestamp.json is expired');
  t.match(tufReason(new BadVersionError('New timestamp version 1 is less than current version 2')),
    /^a rolled-back version/);
  t.match(tufReason(new UnsignedMetadataError('timestamp was signed by 0/1 keys')), /^too few valid signatures/);
  t.match(tufReason(new LengthOrHashMismatchError('x: sha256 a, the targets say b')), /^a length or hash mismatch/);
  t.match(tufReason(new DownloadHTTPError('http://r/metadata/timestamp.json: HTTP 500', 500)),
    /^the server answered with an error/);
  t.equal(tufFault(new Error('http://10.0.2.100/metadata/2.root.json: ENETUNREACH')), 'unreachable');
  t.equal(tufFault(new Error('http://r/x: nothing received for 30 s')), 'unreachable');
  // tuf-js wraps some into a RuntimeError whose message keeps the inner one's.
  t.equal(tufFault(new Error('Unable to load snapshot metadata error snapshot.json is expired')), 'expired');
  t.equal(tufFault(new Error('something else')), 'other');
});

t.test('an expiry seen with a clock not to be trusted is the clock\'s problem', async (t) => {
  const r = tufReason(new ExpiredMetadataError('Final timestamp.json is expired'),
    'the clock reads 2049-01-01T00:00:00Z, 22 years after this build was made (2026-11-29)');
  t.match(r, /^Final timestamp\.json is expired, by this machine's clock, which is not to be trusted \(the clock/);
  t.match(r, /the clock's problem, not the repository's$/);
  t.match(tufReason(new BadVersionError('x'), 'a clock problem'), /^a rolled-back version/, 'only expiries');
});
