// status: StateError codes <-> gRPC status codes, in one place. The exact code also
// travels in the `cosi-error-code` trailer so our own client gets it back unchanged;
// other clients rely on the standard gRPC code (shared/cosi-wire.md rule 6).
import { StateError, type StateErrorCode } from '../state/errors.ts';
import { Status, type StatusCode } from './grpc/framing.ts';
import { GrpcCallError } from './grpc/client.ts';

const TO_GRPC: Record<StateErrorCode, StatusCode> = {
  'not-found': Status.NOT_FOUND,
  'already-exists': Status.ALREADY_EXISTS,
  'owner-conflict': Status.PERMISSION_DENIED,
  'permission-denied': Status.PERMISSION_DENIED,
  'unauthenticated': Status.UNAUTHENTICATED,
  'phase-conflict': Status.INVALID_ARGUMENT,
  'version-conflict': Status.FAILED_PRECONDITION,
  'pending-finalizers': Status.FAILED_PRECONDITION,
  'in-use': Status.FAILED_PRECONDITION,
  'failed-precondition': Status.FAILED_PRECONDITION,
  'invalid-bookmark': Status.FAILED_PRECONDITION,
  'invalid-argument': Status.INVALID_ARGUMENT,
  'unimplemented': Status.UNIMPLEMENTED,
  'buffer-overrun': Status.ABORTED,
  'resource-exhausted': Status.RESOURCE_EXHAUSTED,
  'internal': Status.INTERNAL,
};

const ERROR_CODE_TRAILER = 'cosi-error-code';

/** What the server answers for any thrown value. */
export function toStatus(e: unknown): { code: StatusCode; message: string; trailers: Record<string, string> } {
  const se = StateError.from(e);
  return { code: TO_GRPC[se.code], message: se.message, trailers: { [ERROR_CODE_TRAILER]: se.code } };
}

const FROM_GRPC: Partial<Record<StatusCode, StateErrorCode>> = {
  [Status.NOT_FOUND]: 'not-found',
  [Status.ALREADY_EXISTS]: 'already-exists',
  [Status.PERMISSION_DENIED]: 'permission-denied',
  [Status.UNAUTHENTICATED]: 'unauthenticated',
  [Status.INVALID_ARGUMENT]: 'invalid-argument',
  [Status.FAILED_PRECONDITION]: 'version-conflict',
  [Status.UNIMPLEMENTED]: 'unimplemented',
  [Status.ABORTED]: 'buffer-overrun',
  [Status.RESOURCE_EXHAUSTED]: 'resource-exhausted',
};

/** What the client throws for a failed call. `unavailable` marks the server as unreachable (cosictl's exit code 5). */
export function fromCallError(e: unknown): StateError {
  if (!(e instanceof GrpcCallError)) return StateError.from(e);
  const exact = e.trailers[ERROR_CODE_TRAILER];
  const code = (exact && exact in TO_GRPC ? exact : FROM_GRPC[e.code] ?? 'internal') as StateErrorCode;
  const se = new StateError(code, e.details || `gRPC status ${e.code}`, undefined, { cause: e });
  return se;
}

/** True when the call failed because the server could not be reached (or went away). */
export const isUnreachable = (e: unknown) => {
  const cause = e instanceof StateError ? e.cause : e;
  return cause instanceof GrpcCallError
    && (cause.code === Status.UNAVAILABLE || cause.code === Status.DEADLINE_EXCEEDED);
};

/** The errno of the socket error behind a failed connection (ECONNREFUSED, ETIMEDOUT...), found along the causes. */
export function socketErrno(e: unknown): string | undefined {
  for (let x: unknown = e; x instanceof Error; x = x.cause) {
    const code = (x as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}
