// validate: checks a config offline, against the types and namespaces a machine of
// this build serves (proto/gen/builtin-types.ts), with the machine's own checks and
// messages. Needs no machine.
import { decodeConfigInput } from '../../machinery/config/config-input.ts';
import { ConfigRefused, offlineValidationContext, validateConfig } from '../../machinery/config/validate-config.ts';
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { BUILTIN_NAMESPACES, BUILTIN_TYPES } from '../../proto/gen/builtin-types.ts';
import { flagAll, type Parsed } from '../args.ts';
import { EXIT } from '../errors.ts';
import { readInputs } from '../read-input.ts';

export const VALIDATE_HELP = `usage: cosictl validate -f FILE [-f FILE...]

Checks each FILE as a whole machine config (multi-document YAML, plain or gzip; a
directory gives each of its .yaml, .yml and .json files; an http(s) URL is fetched;
- reads stdin) without a machine: the built-in types of this cosictl's build, plus
the types and namespaces the file defines itself. Prints every problem with
its document number, field and reason, exactly as the machine would; exit code 3
when there is any.
`;

export async function validate(p: Parsed, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  let bad = 0;
  for (const { name, bytes } of await readInputs(flagAll(p, 'filename'), 'validate')) {
    const input = decodeConfigInput(bytes);
    if (!input.ok) {
      err(`${name}: ${input.message}\n`);
      bad++;
      continue;
    }
    // A fresh machine per file: each is a whole config of its own.
    const ctx = await offlineValidationContext(BUILTIN_TYPES as DefinitionInput[], BUILTIN_NAMESPACES);
    try {
      const { docs, skipped } = validateConfig(input.text, ctx, name);
      for (const line of skipped) err(`skipped: ${line}\n`);
      out(`${name}: valid (${docs.length} resource${docs.length === 1 ? '' : 's'})\n`);
    } catch (e) {
      if (!(e instanceof ConfigRefused)) throw e;
      for (const line of e.problems) err(`${line}\n`);
      bad++;
    }
  }
  return bad ? EXIT.invalid : EXIT.ok;
}
