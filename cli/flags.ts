// flags: every flag cosictl knows, for the parser and for shell completion. Which command takes
// which is each command's own `flags` (cli/commands/registry.ts).
import type { FlagSpec } from './args.ts';

/** Every flag any command takes; which command takes which is each command's `flags`. */
export const FLAGS: readonly FlagSpec[] = [
  { name: 'endpoint', short: 'e', value: true }, { name: 'config', value: true }, { name: 'context', value: true },
  { name: 'namespace', short: 'n', value: true }, { name: 'timeout', value: true },
  { name: 'insecure', short: 'i' }, { name: 'fingerprint', value: true },
  { name: 'help', short: 'h' }, { name: 'version' },
  { name: 'output', short: 'o', value: true },
  { name: 'selector', short: 'l', value: true, repeat: true }, { name: 'id-regexp', value: true },
  { name: 'watch', short: 'w' }, { name: 'sort-by', value: true }, { name: 'show-labels' },
  { name: 'label-columns', short: 'L', value: true, repeat: true },
  { name: 'filename', short: 'f', value: true, repeat: true }, { name: 'ignore-not-found' },
  { name: 'dry-run' }, { name: 'try', value: true }, { name: 'confirm' },
  { name: 'secrets', value: true }, { name: 'role', value: true }, { name: 'algorithm', value: true },
  { name: 'days', value: true }, { name: 'force' }, { name: 'server-name', value: true },
  { name: 'disk', value: true }, { name: 'serial', value: true }, { name: 'model', value: true },
  { name: 'size', value: true }, { name: 'wipe' }, { name: 'reboot' }, { name: 'source', value: true },
  { name: 'id', value: true }, { name: 'no-wait' }, { name: 'wait', value: true },
  { name: 'image', value: true }, { name: 'no-reboot' }, { name: 'tries', value: true },
  { name: 'health-timeout', value: true },
  { name: 'client' }, { name: 'short' }, { name: 'raw' }, { name: 'exit-code' },
  { name: 'follow' }, { name: 'tail', value: true }, { name: 'since', value: true }, { name: 'grace', value: true },
  { name: 'once' }, { name: 'nodes', value: true },
  { name: 'for', value: true }, { name: 'previous', short: 'p' }, { name: 'all-namespaces', short: 'A' },
  { name: 'field-selector', value: true, repeat: true }, { name: 'all' }, { name: 'purge-volumes' },
];

/**
 * The flags as one command reads them: `shorts` gives a letter another meaning there (as `-f`
 * is --follow for logs, like kubectl's, and --filename elsewhere).
 */
export function flagsFor(shorts: Readonly<Record<string, string>> = {}): readonly FlagSpec[] {
  return FLAGS.map((f) => {
    const short = Object.entries(shorts).find(([, name]) => name === f.name)?.[0]
      ?? (f.short && !(f.short in shorts) ? f.short : undefined);
    const { short: _old, ...rest } = f;
    return short ? { ...rest, short } : rest;
  });
}

/** The flags every command takes. */
export const GLOBAL_FLAGS: readonly string[] = [
  'endpoint', 'config', 'context', 'namespace', 'timeout', 'insecure', 'fingerprint', 'help', 'nodes',
];
