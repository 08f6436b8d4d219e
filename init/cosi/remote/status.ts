// status: StateError codes <-> gRPC status codes, in one place. The exact code also
// travels in the `cosi-error-code` trailer so our own client gets it back unchanged;
// other clients rely on the standard gRPC code (shared/cosi-wire.md rule 6).
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { StateError, type StateErrorCode } from '../state/errors.ts';

const TO_GRPC: Record<StateErrorCode, status> = {
  'not-found': status.NOT_FOUND,
  'already-exists': status.ALREADY_EXISTS,
  'owner-conflict': status.PERMISSION_DENIED,
  'permission-denied': status.PERMISSION_DENIED,
  'phase-conflict': status.INVALID_ARGUMENT,
  'version-conflict': status.FAILED_PRECONDITION,
  'pending-finalizers': status.FAILED_PRECONDITION,
  'in-use': status.FAILED_PRECONDITION,
  'invalid-bookmark': status.FAILED_PRECONDITION,
  'invalid-argument': status.INVALID_ARGUMENT,
  'unimplemented': status.UNIMPLEMENTED,
  'buffer-overrun': status.ABORTED,
  'internal': status.INTERNAL,
};

/** What the server answers for any thrown value. */
export function toServiceError(e: unknown): Partial<ServiceError> {
  const se = StateError.from(e);
  const md = new Metadata();
  md.set('cosi-error-code', se.code);
  return { code: TO_GRPC[se.code], details: se.message, metadata: md };
}

const FROM_GRPC: Partial<Record<status, StateErrorCode>> = {
  [status.NOT_FOUND]: 'not-found',
  [status.ALREADY_EXISTS]: 'already-exists',
  [status.PERMISSION_DENIED]: 'permission-denied',
  [status.INVALID_ARGUMENT]: 'invalid-argument',
  [status.FAILED_PRECONDITION]: 'version-conflict',
  [status.UNIMPLEMENTED]: 'unimplemented',
  [status.ABORTED]: 'buffer-overrun',
};

/** What the client throws for a failed call. */
export function fromServiceError(e: unknown): StateError {
  const se = e as Partial<ServiceError>;
  if (typeof se?.code !== 'number') return StateError.from(e);
  const exact = se.metadata?.get('cosi-error-code')[0];
  const code = (typeof exact === 'string' && exact in TO_GRPC ? exact : FROM_GRPC[se.code] ?? 'internal') as StateErrorCode;
  return new StateError(code, se.details || se.message || `gRPC status ${se.code}`, undefined, { cause: e });
}
