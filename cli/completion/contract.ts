// contract: what a command and the completer say to each other: the command line read so far, what the machine
// can be asked (Lookups) and what the shell is to offer (Completion). A command's completeArg answers with these;
// complete.ts reads the line and asks the command.
import type { ResourceDefinitionSpec } from '../../cosi/meta/definition.ts';

export interface Candidate { value: string; about?: string }

/** What completion may ask of the machine and of the config file; each answers [] when it cannot. */
export interface Lookups {
  definitions(): Promise<ResourceDefinitionSpec[]>;
  /** The ids of a type (named as users type it) in the namespace -n gives or the type's default. */
  ids(typeName: string): Promise<string[]>;
  namespaces(): Promise<string[]>;
  contexts(): string[];
}

/** What the shell should do: offer `values`, or complete file names itself. */
export type Completion = { values: Candidate[] } | { files: true };

/** The command line so far, read as the parser would, without failing on what is unfinished. */
export interface Line {
  command?: string;
  /** The command's arguments before the one being completed. */
  args: string[];
  flags: Map<string, string[]>;
}
