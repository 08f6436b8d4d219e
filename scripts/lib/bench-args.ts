// bench-args: the benchmarks' command lines: --help text, positive integer flags and
// comma-separated lists that name themselves when the value is bad.
export interface BenchArgs {
  int(name: string, dflt: number): number;
  /** A comma-separated list, each item one of `known`. */
  list(name: string, known: readonly string[], dflt: readonly string[]): string[];
}

export function benchArgs(usage: string): BenchArgs {
  if (process.argv.includes('--help')) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return {
    list(name, known, dflt) {
      const i = process.argv.indexOf(name);
      if (i < 0) return [...dflt];
      const items = (process.argv[i + 1] ?? '').split(',').filter(Boolean);
      const bad = items.filter((x) => !known.includes(x));
      if (!items.length || bad.length) {
        throw new Error(`${name}: ${bad.length ? `unknown ${bad.join(', ')}` : 'nothing given'}; one or more of `
          + known.join(', '));
      }
      return items;
    },
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
