// converge: retry an async check until it passes or time runs out (the controller
// tests' harness: write inputs, then wait for outputs to converge).
export async function converge<T>(check: () => Promise<T> | T, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try { return await check(); } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`${what} did not converge in ${timeoutMs}ms: ${(last as Error)?.message ?? last}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
    try { v = await get(); ok = isDeepStrictEqual(v, expected); } catch { /* not there yet */ }
    if (ok || Date.now() > deadline) return v as T;
    await new Promise((r) => setTimeout(r, 20));
  }
}
