// completion: prints a shell's completion script; `__complete` (not listed: the scripts call it)
// answers one Tab.
import type { Command } from '../command.ts';
import { complete, formatCompletion, readLine } from '../completion/complete.ts';
import type { Completion } from '../completion/contract.ts';
import { COMPLETION_TIMEOUT_MS, machineLookups } from '../completion/machine-lookups.ts';
import { COMPLETION_SCRIPTS } from '../completion/scripts.ts';
import { CliError, EXIT } from '../errors.ts';

const SHELLS = Object.keys(COMPLETION_SCRIPTS);

export const COMPLETION_HELP = `usage: cosictl completion bash|zsh|fish

Prints the shell's completion script. It completes commands, flags and their fixed values,
contexts, and from the machine the command line names: resource types and aliases, ids and
namespaces (each Tab waits at most 2 s for the machine, and offers nothing if it cannot ask).

  bash  source <(cosictl completion bash)            in ~/.bashrc
  zsh   source <(cosictl completion zsh)             in ~/.zshrc, after compinit
        (or save it as _cosictl in a directory of $fpath)
  fish  cosictl completion fish > ~/.config/fish/completions/cosictl.fish
`;

export const completionCommand: Command = {
  name: 'completion',
  summary: 'completion SHELL       shell completion for bash, zsh or fish',
  help: COMPLETION_HELP,
  flags: [],
  completeArg: async (line) => ({ values: line.args.length ? [] : SHELLS.map((value) => ({ value })) }),
  async run({ p, out }) {
    const [shell, ...extra] = p.positional;
    const script = shell === undefined ? undefined : COMPLETION_SCRIPTS[shell];
    if (!script || extra.length) {
      throw new CliError(`completion: name one shell: ${SHELLS.join(', ')}${shell && !script
        ? ` ("${shell}" is not one)` : ''}`, EXIT.usage);
    }
    out(script);
    return EXIT.ok;
  },
};

/** One Tab: `words` are what follows `cosictl` on the line, the last one the word being typed. */
export async function completeWords(words: string[], commands: readonly Command[]): Promise<string> {
  const typed = words.slice(0, -1);
  const lookups = machineLookups(readLine(typed).line);
  let timer: NodeJS.Timeout | undefined;
  // One deadline for the whole Tab, however many questions the machine is asked.
  const late = new Promise<Completion>((resolve) => {
    timer = setTimeout(() => {
      process.stderr.write(`cosictl: completion: no answer within ${COMPLETION_TIMEOUT_MS} ms\n`);
      resolve({ values: [] });
    }, COMPLETION_TIMEOUT_MS);
  });
  try {
    return formatCompletion(await Promise.race([complete(typed, words.at(-1) ?? '', commands, lookups), late]));
  } finally {
    clearTimeout(timer);
    lookups.close();
  }
}
