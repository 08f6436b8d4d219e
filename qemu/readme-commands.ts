// readme-commands: what the README tests share: a section's sh block, split into its commands as a shell reads
// them, and Ctrl-C sent as a terminal sends it.
import type { ChildProcess } from 'node:child_process';

/** The first sh block under the README's `## heading`. */
export function readmeBlock(readme: string, heading: string): string {
  const at = Math.max(readme.indexOf(`\n## ${heading}\n`), readme.indexOf(`\n### ${heading}\n`));
  const block = at < 0 ? undefined : /```sh\n([^]*?)```/.exec(readme.slice(at))?.[1];
  if (!block) throw new Error(`README.md: no sh block under "${heading}"`);
  return block;
}

/**
 * The block's commands: each ends at a line's end outside single quotes. A comment (# after a space,
 * outside quotes) runs to the line's end, and its apostrophes open nothing.
 */
export function commandsOf(text: string): string[] {
  const commands: string[] = [];
  let command = '';
  let quoted = false;
  let comment = false;
  for (const [i, ch] of [...text].entries()) {
    if (ch === '\n' && !quoted) {
      if (command.trim()) commands.push(command.trim());
      command = '';
      comment = false;
      continue;
    }
    if (!quoted && ch === '#' && (i === 0 || /\s/.test(text[i - 1]!))) comment = true;
    if (comment) continue;
    if (ch === "'") quoted = !quoted;
    command += ch;
  }
  if (command.trim()) commands.push(command.trim());
  return commands;
}

/** Ctrl-C (or a kill) to a command and all it started, as a terminal sends it; one that is gone is left. */
export function signalGroup(c: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-c.pid!, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}
