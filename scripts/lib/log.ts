// log: build progress on stderr, one prefix per step, with durations.
export function step(name: string): { done: (what?: string) => void; info: (msg: string) => void } {
  const start = performance.now();
  const prefix = `[${name}]`;
  process.stderr.write(`${prefix} ...\n`);
  return {
    info: (msg) => process.stderr.write(`${prefix} ${msg}\n`),
    done: (what) => {
      const s = ((performance.now() - start) / 1000).toFixed(1);
      process.stderr.write(`${prefix} done in ${s}s${what ? `: ${what}` : ''}\n`);
    },
  };
}
