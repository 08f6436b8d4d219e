// tuf-reason: a refused poll in words an operator acts on, from what tuf-js and @tufjs/models threw: the attack or
// fault TUF names (expired metadata, a rolled-back version, too few signatures, a length or hash that does not
// match), then the library's own message. An expiry seen with a clock that is not to be trusted is said to be the
// clock's problem, not an attack. tuf-js wraps some errors into a RuntimeError whose message keeps the inner one's
// text, so the message is read too.
import { BadVersionError, DownloadHTTPError, DownloadLengthMismatchError, ExpiredMetadataError } from
  'tuf-js/dist/error.js';
import { LengthOrHashMismatchError, UnsignedMetadataError } from '@tufjs/models/dist/error.js';

export type TufFault = 'expired' | 'rollback' | 'signatures' | 'mismatch' | 'http' | 'unreachable' | 'other';

/** What the machine's HTTP client says when no answer came (machinery/sys/http-get.ts: `URL: CODE`, a quiet peer). */
const UNREACHABLE = /: (E[A-Z]+|nothing received for [0-9.]+ s)$/;

export function tufFault(outer: unknown): TufFault {
  // A wrapper (UpdateCheckError) keeps what was thrown as its cause, and its message the cause's words.
  const e = outer instanceof Error && outer.cause instanceof Error ? outer.cause : outer;
  const m = outer instanceof Error ? outer.message : String(outer);
  if (e instanceof ExpiredMetadataError || /is expired/.test(m)) return 'expired';
  if (e instanceof BadVersionError || /less than current version|does not match snapshot|Expected version/.test(m)) {
    return 'rollback';
  }
  if (e instanceof UnsignedMetadataError || /was signed by [0-9]+\/[0-9]+ keys/.test(m)) return 'signatures';
  if (e instanceof LengthOrHashMismatchError || e instanceof DownloadLengthMismatchError
    || /Max length|more than its [0-9]+ bytes|bytes, the targets say|, the targets say [0-9a-f]+$/.test(m)) {
    return 'mismatch';
  }
  if (e instanceof DownloadHTTPError) return 'http';
  if (UNREACHABLE.test(m)) return 'unreachable';
  return 'other';
}

const WORDS: Record<TufFault, string> = {
  expired: 'expired metadata (a stale or frozen repository)',
  rollback: 'a rolled-back version (older metadata than the machine already trusts)',
  signatures: 'too few valid signatures (below the role\'s threshold)',
  mismatch: 'a length or hash mismatch',
  http: 'the server answered with an error',
  unreachable: 'the repository could not be reached',
  other: 'refused',
};

/** The refusal in words; `clockProblem` is TimeStatus's, when the clock is not to be trusted. */
export function tufReason(e: unknown, clockProblem?: string): string {
  const fault = tufFault(e);
  const m = e instanceof Error ? e.message : String(e);
  if (fault === 'expired' && clockProblem) {
    return `${m}, by this machine's clock, which is not to be trusted (${clockProblem}): the clock's problem, not `
      + 'the repository\'s';
  }
  return `${WORDS[fault]}: ${m}`;
}
