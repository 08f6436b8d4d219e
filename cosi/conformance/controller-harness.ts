// controller-harness: the one harness every controller test uses. A real in-memory
// state (normalizing specs the way the engine does when given the types' codecs), a
// real runtime with the controllers under test, helpers to seed and change inputs,
// and converge-and-assert. Nothing is mocked: the controllers' kernel interfaces are
// injected by the test (the real kernel in a private namespace, or an in-memory one).
import type { Test } from 'tap';
import type { Controller } from '../controller/contract.ts';
import { ControllerRuntime } from '../controller/runtime.ts';
import { newResource, type Pointer, type Resource } from '../resource/resource.ts';
import { isNotFound } from '../state/errors.ts';
import { copyResource } from '../state/freeze.ts';
import { MemoryState } from '../state/memory-state.ts';
import type { SpecCodecs } from '../spec/spec-codec.ts';
import { until } from './converge.ts';

export interface HarnessOptions {
  /** Codecs of the types involved: specs are stored normalized, as the engine stores them. */
  codecs?: SpecCodecs;
  /** Resources present before the controllers start. */
  seed?: Resource[];
  backoff?: { initialMs: number; factor: number; maxMs: number };
}

export interface Harness {
  readonly state: MemoryState;
  readonly runtime: ControllerRuntime;
  /** What the controllers logged as errors (and warnings), for assertions. */
  readonly logged: { level: 'warn' | 'error'; controller: string; message: string }[];
  /** Creates a resource as a user would (owner ""). */
  create<S>(p: Pointer, spec: S, labels?: Record<string, string>): Promise<Resource<S>>;
  /** Replaces a user resource's spec. */
  update<S>(p: Pointer, spec: S): Promise<Resource<S>>;
  /** Tears down and destroys, waiting for the controllers' finalizers (what `cosictl delete` does). */
  remove(p: Pointer, timeoutMs?: number): Promise<void>;
  /** The spec, or undefined when the resource is not there. */
  spec<S = Record<string, unknown>>(p: Pointer): Promise<S | undefined>;
  /** Ids of a kind, sorted. */
  ids(kind: { namespace: string; type: string }): Promise<string[]>;
  /** Polls until `get` deep-equals `want` (returns the last value: assert on it). */
  until<T>(get: () => Promise<T> | T, want: T, timeoutMs?: number): Promise<T>;
}

export async function controllerHarness(
  t: Test, controllers: readonly Controller[], o: HarnessOptions = {},
): Promise<Harness> {
  const normalize = (type: string, spec: unknown) => o.codecs?.get(type)?.normalize(spec) ?? spec;
  const state = new MemoryState({ normalize });
  for (const r of o.seed ?? []) await state.create(r, { owner: r.metadata.owner });
  const logged: Harness['logged'] = [];
  const runtime = new ControllerRuntime(state, {
    normalize,
    log: (controller) => ({
      info: () => {},
      warn: (message) => { logged.push({ level: 'warn', controller, message }); },
      error: (message) => { logged.push({ level: 'error', controller, message }); },
    }),
    backoff: o.backoff ?? { initialMs: 20, factor: 1.5, maxMs: 500 },
  });
  for (const c of controllers) runtime.register(c);
  runtime.start();
  t.teardown(() => runtime.stop());
  return {
    state, runtime, logged,
    create: (p, spec, labels) => state.create(newResource(p, spec, labels ? { labels } : {})) as never,
    async update(p, spec) {
      const cur = copyResource(await state.get(p));
      cur.spec = spec;
      return state.update(cur) as never;
    },
    async remove(p, timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`removing ${p.type}/${p.id}: finalizers still pending after ${timeoutMs}ms`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([state.teardownAndDestroy(p), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async spec<S>(p: Pointer) {
      try {
        return (await state.get(p)).spec as S;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    ids: async (kind) => (await state.list(kind)).map((r) => r.metadata.id),
    until,
  };
}
