// complete: what may come next on a cosictl command line, for the shells' completion scripts
// (`cosictl completion bash|zsh|fish`), which run `cosictl __complete WORD... CURRENT` on Tab.
// Commands, flags and fixed values are known here; types, ids and namespaces come from the
// machine, each command saying what its arguments are (Command.completeArg).
import { commandWord, type FlagSpec } from '../args.ts';
import type { Command } from '../command.ts';
import { FLAGS, flagsFor, GLOBAL_FLAGS } from '../flags.ts';
import type { Candidate, Completion, Line, Lookups } from './contract.ts';

const specOf = (word: string, specs: readonly FlagSpec[]): FlagSpec | undefined =>
  specs.find((f) => `--${f.name}` === word || (f.short !== undefined && `-${f.short}` === word));

/**
 * Reads `words` (all but the current one). When the last of them is a flag that takes a value, the
 * current word is that value: `valueFor` names the flag.
 */
export function readLine(words: readonly string[], specs = FLAGS): { line: Line; valueFor?: FlagSpec } {
  const line: Line = { args: [], flags: new Map() };
  const positional = (w: string) => {
    if (line.command === undefined) line.command = w;
    else line.args.push(w);
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--') {
      words.slice(i + 1).forEach(positional);
      break;
    }
    if (!w.startsWith('-') || w === '-') {
      positional(w);
      continue;
    }
    const eq = w.startsWith('--') ? w.indexOf('=') : -1;
    const spec = specOf(eq > 0 ? w.slice(0, eq) : w, specs);
    if (!spec) continue;
    let value = 'true';
    if (spec.value && eq < 0) {
      if (i === words.length - 1) return { line, valueFor: spec };
      value = words[++i]!;
    } else if (eq > 0) value = w.slice(eq + 1);
    line.flags.set(spec.name, [...(line.flags.get(spec.name) ?? []), value]);
  }
  return { line };
}

/** The values a flag takes, when they are a known few or files. */
async function flagValues(flag: string, line: Line, lookups: Lookups): Promise<Completion> {
  switch (flag) {
    case 'filename': case 'config': case 'secrets': case 'image': return { files: true };
    case 'output':
      if (line.command === 'gen') return { files: true };
      if (line.command === 'logs' || line.command === 'dmesg') return { values: [{ value: 'json' }] };
      return { values: (line.command === 'version' ? ['json', 'yaml'] : ['wide', 'yaml', 'json', 'name', 'jsonpath='])
        .map((value) => ({ value })) };
    case 'context': return { values: lookups.contexts().map((value) => ({ value })) };
    case 'namespace': return { values: (await lookups.namespaces()).map((value) => ({ value })) };
    case 'role': return { values: ['admin', 'operator', 'reader'].map((value) => ({ value })) };
    case 'algorithm': return { values: ['ecdsa-p256', 'ed25519'].map((value) => ({ value })) };
    case 'for': return { values: ['jsonpath=', 'condition=', 'create', 'delete'].map((value) => ({ value })) };
    default: return { values: [] };
  }
}

/** The names to offer for types: each one's plural and its aliases (the full name is the description). */
export async function typeCandidates(lookups: Lookups): Promise<Candidate[]> {
  // Names are unique across types (fillDefinitions gives no type an alias another has).
  return (await lookups.definitions())
    .flatMap((d) => [...new Set([d.allAliases[0]!, ...d.aliases])].map((value) => ({ value, about: d.type })));
}

/** Completes TYPE, then up to `maxIds` ids of it (not those given already); nothing after -f. */
export const typeThenIds = (maxIds: number) => async (line: Line, _current: string, lookups: Lookups):
Promise<Completion> => {
  if (line.flags.has('filename')) return { values: [] };
  if (line.args.length === 0) return { values: await typeCandidates(lookups) };
  if (line.args.length > maxIds) return { values: [] };
  const given = new Set(line.args.slice(1));
  return { values: (await lookups.ids(line.args[0]!)).filter((id) => !given.has(id)).map((value) => ({ value })) };
};

/** Completes one of a fixed list of words as the first argument. */
export const firstOf = (words: readonly Candidate[]) => async (line: Line): Promise<Completion> =>
  ({ values: line.args.length ? [] : [...words] });

export async function complete(
  words: readonly string[], current: string, commands: readonly Command[], lookups: Lookups,
): Promise<Completion> {
  const named = commands.find((c) => c.name === commandWord(words, FLAGS));
  const { line, valueFor } = readLine(words, flagsFor(named?.shorts));
  let result: Completion;
  if (valueFor) result = await flagValues(valueFor.name, line, lookups);
  else if (current.startsWith('-')) {
    const takes = commands.find((c) => c.name === line.command)?.flags ?? [];
    result = { values: FLAGS.filter((f) => GLOBAL_FLAGS.includes(f.name) || takes.includes(f.name))
      .map((f) => ({ value: `--${f.name}` })) };
  } else if (line.command === undefined || line.command === 'help') {
    result = line.command === 'help' && line.args.length ? { values: [] } : {
      values: [
        ...commands.map((c) => ({ value: c.name, about: c.summary.split('\n')[0]!.replace(/^.*?\s{2,}/, '') })),
        ...(line.command ? [] : [{ value: 'help', about: "a command's help" }]),
      ],
    };
  } else {
    const command = commands.find((c) => c.name === line.command);
    result = command?.completeArg ? await command.completeArg(line, current, lookups) : { values: [] };
  }
  if ('files' in result) return result;
  return { values: result.values.filter((c) => c.value.startsWith(current)) };
}

/** The protocol the scripts read: one candidate per line ("value<TAB>about"), then ":files" or ":done". */
export function formatCompletion(c: Completion): string {
  if ('files' in c) return ':files\n';
  // A value holding a tab or a line break cannot travel as a line (nor be typed): it is not offered.
  const values = c.values.filter((v) => !/[\t\n\r]/.test(v.value));
  return `${values.map((v) => `${v.value}\t${(v.about ?? '').replace(/[\t\n]/g, ' ')}`).join('\n')}${
    values.length ? '\n' : ''}:done\n`;
}
