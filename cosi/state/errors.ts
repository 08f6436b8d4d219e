// errors: the one error type of the state, with a closed set of codes. Callers test
// the code (isNotFound, isConflict, ...), never the message. The gRPC mapping of
// each code lives in remote/status.ts.

export type StateErrorCode =
  | 'not-found'
  | 'already-exists'
  | 'owner-conflict'       // owner mismatch
  | 'phase-conflict'       // update's expected phase differs
  | 'version-conflict'     // stale or future version
  | 'pending-finalizers'   // destroy with finalizers left
  | 'in-use'               // a definition or namespace that still holds resources
  | 'failed-precondition'  // not now: the state does not allow it (confirm with no config being tried)
  | 'invalid-bookmark'
  | 'invalid-argument'     // bad regexp, bad request shape, bad spec
  | 'unimplemented'        // bootstrap/labels on a single-resource watch, unknown label op
  | 'permission-denied'    // a writer writing a type it does not own
  | 'unauthenticated'      // a client whose certificate the machine refused (expired by its clock, another CA)
  | 'buffer-overrun'
  | 'resource-exhausted'   // over a limit (request size, watches, labels): ask for less
  | 'internal';

export class StateError extends Error {
  constructor(readonly code: StateErrorCode, message: string, readonly input?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StateError';
  }

  /** Normalises anything thrown into a StateError, keeping it as the cause. */
  static from(e: unknown): StateError {
    if (e instanceof StateError) return e;
    return new StateError('internal', e instanceof Error ? e.message : String(e), undefined, { cause: e });
  }
}

export const isNotFound = (e: unknown) => e instanceof StateError && e.code === 'not-found';
export const isAlreadyExists = (e: unknown) => e instanceof StateError && e.code === 'already-exists';
export const isConflict = (e: unknown) => e instanceof StateError && (
  e.code === 'version-conflict' || e.code === 'phase-conflict' || e.code === 'owner-conflict'
  || e.code === 'pending-finalizers'
);
export const isVersionConflict = (e: unknown) => e instanceof StateError && e.code === 'version-conflict';
export const isPermissionDenied = (e: unknown) =>
  e instanceof StateError && (e.code === 'permission-denied' || e.code === 'owner-conflict');
