// argv: the command's own arguments. Run as a single executable, argv is
// [exe, exe, ...args]; run as `node bundle.cjs` or through tsx it is [node, script, ...args].
// Either way the arguments start at index 2.
export function commandArgs(argv: readonly string[] = process.argv): string[] {
  return argv.slice(2);
}
