// command: what each cosictl command is to main: its help, the flags it takes besides
// the global ones, and how it runs. Commands that talk to a machine ask for the session;
// those that do not (validate, gen, config, completion) never connect.
import type { Parsed } from './args.ts';
import type { Completion, Line, Lookups } from './completion/contract.ts';
import type { TableOut } from './output/table.ts';
import type { Session } from './session.ts';

export interface SessionWait {
  until: number;
  progress: (why: string) => void;
}

export interface CommandIo {
  /** The command's arguments (after its name) and every flag given. */
  p: Parsed;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Where a table goes (not through `out`): a fan-out over several machines merges them. */
  table: TableOut;
  /**
   * The connected session (made on first call). With `wait`, a machine that cannot be reached yet is tried
   * again until `wait.until` (a time in ms), each new reason handed to `wait.progress`: --wait covers the API.
   */
  session: (wait?: SessionWait) => Promise<Session>;
  /** The config file cosictl reads its contexts from (--config, $COSICTL_CONFIG, or the default). */
  configPath: string;
  /** --config was given: the file must exist. */
  configGiven: boolean;
}

export interface Command {
  name: string;
  /** The line(s) in `cosictl --help`'s list of commands. */
  summary: string;
  /** `cosictl help NAME`, `cosictl NAME --help`. */
  help: string;
  /** The flags it takes besides the global ones (long names). */
  flags: readonly string[];
  /**
   * It may run on several machines at once (--nodes, or a context with several endpoints): it reads, and
   * prints tables through `table` (merged, with a NODE column) and lines through `out` (each after its node).
   */
  fanOut?: boolean;
  /** Letters that mean another flag in this command than elsewhere (logs: f is follow). */
  shorts?: Readonly<Record<string, string>>;
  run(io: CommandIo): Promise<number>;
  /** Shell completion of the argument being typed (`current`), after `line.args`. */
  completeArg?(line: Line, current: string, lookups: Lookups): Promise<Completion>;
}
