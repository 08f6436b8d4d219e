// timing: where a cosictl command's time goes, said on stderr when COSICTL_TIMING=1 (bench:cli --vm reads it):
// the process's start up to main, the connection, and each call to the machine with how long it took. Calls
// made at once overlap: the total is the wall time, not their sum.
const ON = process.env.COSICTL_TIMING === '1';
const spans: { what: string; start: number; ms: number }[] = [];

/** `o` with each method that returns a promise timed under `prefix.method` (timing off: `o` itself). */
export function timeMethods<T extends object>(o: T, prefix: string): T {
  if (!ON) return o;
  return new Proxy(o, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== 'function' || typeof key !== 'string') return v;
      return (...args: unknown[]) => {
        const start = performance.now();
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (!(r instanceof Promise)) return r;
        const what = `${prefix}.${key}${typeof args[0] === 'string' ? ` ${args[0]}`
          : typeof (args[0] as { type?: unknown })?.type === 'string' ? ` ${(args[0] as { type: string }).type}` : ''}`;
        return r.finally(() => spans.push({ what, start, ms: performance.now() - start }));
      };
    },
  });
}

/** The lines, when timing is on: the start, each span in the order they began, and the wall time. */
export function timingReport(): string {
  if (!ON) return '';
  const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
  const lines = [`cosictl timing: process start to main ${fmt(mainAt)}`,
    ...spans.sort((a, b) => a.start - b.start).map((s) => `cosictl timing: +${fmt(s.start)} ${s.what} ${fmt(s.ms)}`),
    `cosictl timing: total ${fmt(performance.now())}`];
  return `${lines.join('\n')}\n`;
}

/** When main began, in ms since the process started. */
const mainAt = performance.now();
