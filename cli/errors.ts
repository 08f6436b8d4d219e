// errors: cosictl's exit codes, the contract scripts rely on (see `cosictl --help`).
import { isUnreachable } from '../cosi/remote/status.ts';
import { StateError } from '../cosi/state/errors.ts';

export const EXIT = {
  ok: 0,
  /** The API refused or failed the request. */
  failed: 1,
  /** Bad command line. */
  usage: 2,
  /** Input documents are invalid: nothing was written. */
  invalid: 3,
  /** The resource (or type) does not exist. */
  notFound: 4,
  /** The API could not be reached. */
  unreachable: 5,
  /**
   * TLS refused: the machine refused this client's certificate (another CA, no role, out of its dates by the
   * machine's clock), or this client the machine's (not from the context's CA, a wrong fingerprint).
   */
  refused: 6,
} as const;

export class CliError extends Error {
  constructor(message: string, readonly exitCode: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
  }
}

export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  if (e instanceof StateError) {
    if (e.code === 'not-found') return EXIT.notFound;
    if (e.code === 'unauthenticated') return EXIT.refused;
    if (isUnreachable(e) || /UNAVAILABLE|No connection established|cannot reach/i.test(e.message)) {
      return EXIT.unreachable;
    }
    return EXIT.failed;
  }
  if (/cannot reach the COSI API/.test((e as Error)?.message ?? '')) return EXIT.unreachable;
  return EXIT.failed;
}
