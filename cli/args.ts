// args: a small option parser: long and short flags, values, repeated flags, and
// positional arguments; unknown flags are usage errors that name the flag.
import { CliError, EXIT } from './errors.ts';

export interface FlagSpec { name: string; short?: string; value?: boolean; repeat?: boolean }

export interface Parsed { flags: Map<string, string[]>; positional: string[] }

export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): Parsed {
  const flags = new Map<string, string[]>();
  const positional: string[] = [];
  const find = (a: string) => specs.find((s) => `--${s.name}` === a || (s.short && `-${s.short}` === a));
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    if (raw === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!raw.startsWith('-') || raw === '-') {
      positional.push(raw);
      continue;
    }
    const [a, inline] = raw.includes('=') && raw.startsWith('--')
      ? [raw.slice(0, raw.indexOf('=')), raw.slice(raw.indexOf('=') + 1)]
      : [raw, undefined];
    const spec = find(a);
    if (!spec) throw new CliError(`unknown flag ${a} (see --help)`, EXIT.usage);
    let v = 'true';
    if (spec.value) {
      v = inline ?? argv[++i] ?? '';
      if (inline === undefined && i >= argv.length) throw new CliError(`${a} needs a value`, EXIT.usage);
    }
    const list = flags.get(spec.name) ?? [];
    if (!spec.repeat && list.length) throw new CliError(`${a} given twice`, EXIT.usage);
    flags.set(spec.name, [...list, v]);
  }
  return { flags, positional };
}

/** The first word that is not a flag or a flag's value: the command's name, before the command is known. */
export function commandWord(argv: readonly string[], specs: readonly FlagSpec[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return argv[i + 1];
    if (!a.startsWith('-') || a === '-') return a;
    const spec = specs.find((s) => `--${s.name}` === a || (s.short && `-${s.short}` === a));
    if (spec?.value) i++;
  }
  return undefined;
}

export const flag = (p: Parsed, name: string): string | undefined => p.flags.get(name)?.[0];
export const flagAll = (p: Parsed, name: string): string[] => p.flags.get(name) ?? [];
export const has = (p: Parsed, name: string): boolean => p.flags.has(name);

/** A command that takes no (more) arguments refuses the first one given, naming itself (`command`). */
export function noArguments(command: string, args: readonly string[]): void {
  if (args.length) throw new CliError(`${command}: unexpected argument "${args[0]}"`, EXIT.usage);
}

/** TYPE/ID as one word, or TYPE and ID as two: [type, id] (either undefined when not given). */
export function typeAndId(
  first: string | undefined, second: string | undefined,
): [string | undefined, string | undefined] {
  const slash = first?.indexOf('/') ?? -1;
  return slash > 0 && second === undefined ? [first!.slice(0, slash), first!.slice(slash + 1)] : [first, second];
}
