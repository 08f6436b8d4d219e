// validate: checks a config offline, against the types and namespaces a machine of
// this build serves (proto/gen/builtin-types.ts), with the machine's own checks and
// messages. Needs no machine.
import { decodeConfigInput } from '../../init/config/config-input.ts';
import { ConfigRefused, offlineValidationContext, validateConfig } from '../../init/config/validate-config.ts';
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';
import { BUILTIN_NAMESPACES, BUILTIN_TYPES } from '../../proto/gen/builtin-types.ts';
import { flagAll, type Parsed } from '../args.ts';
import { CliError, EXIT } from '../errors.ts';
import { readInput } from '../read-input.ts';

export const VALIDATE_HELP = `usage: cosictl validate -f FILE [-f FILE...]

Checks each FILE as a whole machine config (multi-document YAML, plain or gzip;
- reads stdin) without a machine: the built-in types of this cosictl's build,
plus the types and namespaces the file defines itself. Prints every problem with
its document number, field and reason, exactly as the machine would; exit code 3
when there is any.
`;

export async function validate(p: Parsed, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  const files = flagAll(p, 'filename');
  if (!files.length) throw new CliError('validate: give -f FILE (or -f - for stdin)', EXIT.usage);
  let bad = 0;
  for (const f of files) {
    const name = f === '-' ? 'stdin' : f;
    const input = decodeConfigInput(readInput(f));
    if (!input.ok) { err(`${name}: ${input.message}\n`); bad++; continue; }
    // A fresh machine per file: each is a whole config of its own.
    const ctx = await offlineValidationContext(BUILTIN_TYPES as DefinitionInput[], BUILTIN_NAMESPACES);
    try {
      const docs = validateConfig(input.text, ctx, name);
      out(`${name}: valid (${docs.length} resource${docs.length === 1 ? '' : 's'})\n`);
    } catch (e) {
      if (!(e instanceof ConfigRefused)) throw e;
      for (const line of e.problems) err(`${line}\n`);
      bad++;
    }
  }
  return bad ? EXIT.invalid : EXIT.ok;
}
