// bench-args: the benchmarks' command lines: --help text, and positive integer flags
// that name themselves when the value is bad.
export function benchArgs(usage: string): { int(name: string, dflt: number): number } {
  if (process.argv.includes('--help')) { process.stdout.write(usage); process.exit(0); }
  return {
    int(name, dflt) {
      const i = process.argv.indexOf(name);
      const v = i >= 0 ? Number(process.argv[i + 1]) : dflt;
      if (!Number.isInteger(v) || v <= 0) throw new Error(
        `${name} needs a positive integer, got "${process.argv[i + 1]}"`,
      );
      return v;
    },
  };
}
