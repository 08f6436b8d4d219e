// read-input: the bytes of a -f argument (a path, or - for stdin); unreadable is a usage error naming the file.
import { readFileSync } from 'node:fs';
import { CliError, EXIT } from './errors.ts';

export function readInput(path: string): Buffer {
  try { return path === '-' ? readFileSync(0) : readFileSync(path); } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`, EXIT.usage);
  }
}
