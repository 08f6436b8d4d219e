// converge: wait for controllers to converge (the controller tests' harness: write
// inputs, then wait for outputs).
/**
 * Polls `get` until its value deep-equals `expected`; returns the last value either
 * way, so the caller's own assertion shows the difference on a timeout:
 *   t.same(await until(() => list(), want), want)
 */
export async function until<T>(get: () => Promise<T> | T, expected: T, timeoutMs = 5000): Promise<T> {
  const { isDeepStrictEqual } = await import('node:util');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let v: T | undefined;
    let ok = false;
    let error: unknown;
    // not there yet, until the deadline
    try {
      v = await get();
      ok = isDeepStrictEqual(v, expected);
    } catch (e) {
      error = e;
    }
    if (ok) return v as T;
    if (Date.now() > deadline) {
      if (error) throw error;
      return v as T;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
