// contract: what a controller is. It declares its inputs (what wakes it) and
// outputs (what it may write); the runtime calls run() with a context whose state
// enforces both, and restarts run() with backoff if it throws.
import type { Pointer, Resource } from '../resource/resource.ts';
import type { ResourceFilter } from '../state/query.ts';

/** weak: wakes the controller. strong: may also hold finalizers on it.
 * destroy-ready: wakes only when the input is tearing down with no finalizers left. */
export type InputKind = 'weak' | 'strong' | 'destroy-ready';
export interface Input { namespace: string; type: string; id?: string; kind: InputKind }

/** exclusive: one controller writes the type; shared: several may, each its own resources. */
export interface Output { type: string; kind: 'exclusive' | 'shared' }

export interface ControllerLog { info(msg: string): void; warn(msg: string): void; error(msg: string): void }

/** Reads of inputs and outputs; writes of outputs only, owned by the controller. */
export interface ControllerState {
  get(p: Pointer): Promise<Resource>;
  /** get, or undefined when missing. */
  find(p: Pointer): Promise<Resource | undefined>;
  list(kind: { namespace: string; type: string }, filter?: ResourceFilter): Promise<Resource[]>;
  /** Creates the output, or updates it when it exists: `mutate` sets spec/labels on a fresh copy. */
  modify<S>(p: Pointer, init: S, mutate?: (r: Resource<S>) => void): Promise<Resource<S>>;
  /** Creates or updates the output with exactly this spec (a no-op when it already has it). */
  put<S>(p: Pointer, spec: S): Promise<Resource<S>>;
  teardown(p: Pointer): Promise<boolean>;
  destroy(p: Pointer): Promise<void>;
  addFinalizer(p: Pointer): Promise<void>;
  removeFinalizer(p: Pointer): Promise<void>;
  /**
   * Tears down and destroys this controller's resources of `type` whose id is not in `keep`; returns what
   * is still tearing down.
   */
  cleanup(kind: { namespace: string; type: string }, keep: ReadonlySet<string>): Promise<string[]>;
}

export interface ControllerContext {
  readonly state: ControllerState;
  readonly log: ControllerLog;
  readonly signal: AbortSignal;
  /** Resolves true when a reconcile is due (requests coalesce), false when the controller must stop. */
  next(): Promise<boolean>;
  /** Asks for a reconcile from outside the state (a kernel event, a timer). */
  requestReconcile(): void;
}

export interface Controller {
  readonly name: string;
  /** The owner its writes carry; default its name (the engine's controllers all write as "engine"). */
  readonly owner?: string;
  inputs(): Input[];
  outputs(): Output[];
  run(ctx: ControllerContext): Promise<void>;
}
