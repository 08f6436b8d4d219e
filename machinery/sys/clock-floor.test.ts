// The clock's floor and the wording of time checks: one rule, read the same by PID 1, the time plugin, the API's
// client-certificate check and the machine's HTTP client.
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { bootClockNote, clockNote, clockProblem, floorFor } from './clock-floor.ts';
import { validityProblem } from '../pki/validity.ts';
import { generateSecrets } from '../pki/secrets.ts';

const FLOOR = Date.UTC(2026, 10, 26, 12);
const EPOCH = 0;
const FAR = Date.UTC(2099, 0, 1);

t.test('a clock before the floor is moved to it; one at or past it is left alone; no floor, no move', async (t) => {
  t.equal(floorFor(EPOCH + 3000, FLOOR), FLOOR);
  t.equal(floorFor(FLOOR, FLOOR), undefined);
  t.equal(floorFor(FAR, FLOOR), undefined, 'far ahead is not moved back: only a server may do that');
  t.equal(floorFor(EPOCH, 0), undefined, 'run from source: no floor');
});

t.test('what is wrong with a clock: before the floor, implausibly after it, or nothing', async (t) => {
  t.equal(clockProblem(EPOCH + 5000, FLOOR),
    'the clock reads 1970-01-01T00:00:05Z, before this build was made (2026-11-26)');
  t.equal(clockProblem(FAR, FLOOR),
    'the clock reads 2099-01-01T00:00:00Z, 72 years after this build was made (2026-11-26)');
  t.equal(clockProblem(FLOOR + 9 * 365 * 86400e3, FLOOR), undefined, 'nine years on is plausible');
  t.equal(clockProblem(FAR, 0), undefined);
  t.match(clockNote(FAR, FLOOR), /^the machine's clock is likely wrong: the clock reads 2099.*see TimeStatus\)$/);
  t.equal(clockNote(FLOOR, FLOOR), 'by the machine\'s clock, which reads 2026-11-26T12:00:00Z');
});

t.test('where the clock started: a dead RTC, no RTC, or nothing to say', async (t) => {
  t.equal(bootClockNote(EPOCH, FLOOR), 'the RTC read 1970-01-01T00:00:00Z at boot, before this build was made: '
    + 'the clock was moved forward to 2026-11-26T12:00:00Z');
  t.equal(bootClockNote(undefined, FLOOR), 'no RTC: the clock started from this build\'s date (2026-11-26T12:00:00Z)');
  t.equal(bootClockNote(FLOOR + 1000, FLOOR), undefined);
  t.equal(bootClockNote(undefined, 0), undefined);
});

t.test('a certificate out of its validity is refused with its dates and the clock named', async (t) => {
  // What `cosictl gen secrets` makes: valid from 2000 (machines with wrong clocks) for a year from now.
  const s = generateSecrets({ now: new Date(FLOOR) });
  const admin = new X509Certificate(s.clients.admin.certificate);
  t.equal(validityProblem('the client certificate', admin, FLOOR + 1000, FLOOR), undefined);
  t.equal(validityProblem('the client certificate', admin, EPOCH, FLOOR), 'the client certificate is not valid '
    + 'before 2000-01-01T00:00:00Z, the machine\'s clock is likely wrong: the clock reads 1970-01-01T00:00:00Z, '
    + 'before this build was made (2026-11-26); a TimeServerSpec or a corrected RTC sets it (see TimeStatus)');
  t.match(validityProblem('the client certificate', admin, FAR, FLOOR),
    /^the client certificate expired 2027-\d\d-\d\dT[\d:]+Z, the machine's clock is likely wrong: the clock reads 2099/,
  );
  const late = Date.parse(admin.validTo) + 1000;
  t.match(validityProblem('the client certificate', admin, late, FLOOR),
    /expired .*, by the machine's clock, which reads 2027-/, 'a plausible clock: the certificate is at fault');
});
