// self-command: how to start this same program with other arguments. As a single
// executable that is just the executable; from source (tsx) it is node plus the
// loader flags and the script.
import { isSea } from 'node:sea';

export function selfCommand(args: string[]): { file: string; args: string[] } {
  if (isSea()) return { file: process.execPath, args };
  return { file: process.execPath, args: [...process.execArgv, process.argv[1]!, ...args] };
}
