// validity: the one wording of a certificate that fails its time check on the machine (a client's at the API, a
// server's for the machine's HTTP client): when it was valid, and the machine's clock as machinery/sys/clock-floor.ts
// judges it, so a refusal caused by a wrong clock names the clock.
import type { X509Certificate } from 'node:crypto';
import { clockNote, instant } from '../sys/clock-floor.ts';

/** The validity of a certificate, as X509Certificate gives it. */
export type Validity = Pick<X509Certificate, 'validFrom' | 'validTo'>;

/**
 * Why `what` is not valid now (not yet valid, or expired), naming the clock; undefined when it is valid at `nowMs`.
 */
export function validityProblem(what: string, v: Validity, nowMs = Date.now(), floorMs?: number): string | undefined {
  const from = Date.parse(v.validFrom);
  const to = Date.parse(v.validTo);
  if (nowMs < from) return `${what} is not valid before ${instant(from)}, ${clockNote(nowMs, floorMs)}`;
  if (nowMs > to) return `${what} expired ${instant(to)}, ${clockNote(nowMs, floorMs)}`;
  return undefined;
}

/** OpenSSL's verify results that are about time alone: the certificate's dates against this clock. */
export const TIME_VERIFY_CODES: ReadonlySet<string> = new Set(['CERT_NOT_YET_VALID', 'CERT_HAS_EXPIRED']);
