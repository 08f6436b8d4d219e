// cosictl: the client of the appliance's COSI API. Runs on the user's machine.
import { commandWord, flag, has, parseArgs } from './args.ts';
import { FLAGS, flagsFor, GLOBAL_FLAGS } from './flags.ts';
import { COMMANDS, commandNamed } from './commands/registry.ts';
import { clientLine } from './commands/version.ts';
import { completeWords } from './commands/completion.ts';
import { contextNodes, defaultConfigPath, loadContext, type Context, type ContextOptions } from './config.ts';
import { fanOut } from './fan-out.ts';
import { renderTable } from './output/table.ts';
import { CliError, EXIT, exitCodeOf } from './errors.ts';
import { parseDuration } from './duration.ts';
import { didYouMean } from './did-you-mean.ts';
import { Session } from './session.ts';
import { timingReport } from './timing.ts';
import type { SessionWait } from './command.ts';

const HELP = `usage: cosictl [global flags] COMMAND [args]

Reads, watches and declares the appliance's resources over the COSI API.

commands:
${COMMANDS.map((c) => `  ${c.summary}`).join('\n')}
  help COMMAND           that command's help (also: cosictl COMMAND --help)

global flags:
  -e, --endpoint ADDR    HOST[:PORT] or a unix socket path (default: $COSICTL_ENDPOINT, then the
                         context's, then 127.0.0.1:50000)
      --config FILE      config file (default: $COSICTL_CONFIG, then ~/.config/cosictl/config.yaml)
      --context NAME     context in the config file (default: the file's current context)
  -i, --insecure         do not verify the machine's certificate and send none: a machine in
                         maintenance mode (it prints its certificate's fingerprint on the console)
      --fingerprint FP   with --insecure: the machine's certificate must have this SHA-256
                         fingerprint (AA:BB:..., as the console and \`get apicert\` show it)
      --nodes A,B        run on these machines at once (HOST[:PORT], comma-separated), with the
                         context's credentials: tables get a NODE column, other lines the node
                         first; a machine that fails is named and the others still answer. A
                         context with \`endpoints: [A, B]\` means its machines without --nodes.
                         Commands that change a machine take one at a time
  -n, --namespace NS     namespace (default: the type's default namespace, then the context's)
      --timeout DURATION give up on a call the machine has not answered within it (e.g. 30s;
                         default 5s to connect, 10s per call, 60s to apply, upload or wait for
                         a delete's finalizers). A watch has none: it pings the machine every
                         5s and ends (exit 5) when the machine stops answering
  -h, --help             help (also after a command: cosictl get --help)
      --version          this cosictl's version

exit codes: 0 ok, 1 the API refused or failed, 2 bad usage, 3 invalid input (nothing
written), 4 not found, 5 API unreachable, 6 TLS refused: the machine refused this client's
certificate (another CA, no role, or out of its dates by the machine's clock), or this client
refused the machine's (not from the context's CA, a wrong --fingerprint): the message says which.
`;

const out = (s: string) => {
  process.stdout.write(s);
};
const err = (s: string) => {
  process.stderr.write(s);
};

/** A flag the command does not take is refused, naming the commands that do. */
function checkFlags(command: string, given: Iterable<string>, takes: readonly string[]): void {
  for (const name of given) {
    if (GLOBAL_FLAGS.includes(name) || takes.includes(name)) continue;
    const by = COMMANDS.filter((c) => c.flags.includes(name)).map((c) => c.name);
    throw new CliError(`--${name} is not a flag of ${command}${by.length ? ` (${by.join(', ')} take${
      by.length === 1 ? 's' : ''} it)` : ''}; see cosictl ${command} --help`, EXIT.usage);
  }
}

export async function cosictl(argv: string[]): Promise<number> {
  if (argv[0] === '__complete') {
    out(await completeWords(argv.slice(1), COMMANDS));
    return EXIT.ok;
  }
  const p = parseArgs(argv, flagsFor(commandNamed(commandWord(argv, FLAGS) ?? '')?.shorts));
  const [name, ...rest] = p.positional;
  if (has(p, 'version') && !name) {
    out(`${clientLine()}\n`);
    return EXIT.ok;
  }
  // Bare, it says what it does: help, not a usage error (kubectl, git).
  if (!name) {
    out(HELP);
    return EXIT.ok;
  }
  if (name === 'help') {
    const about = rest[0] === undefined ? undefined : commandNamed(rest[0]);
    if (rest[0] !== undefined && !about) throw unknownCommand(rest[0]);
    out(about?.help ?? HELP);
    return EXIT.ok;
  }
  const command = commandNamed(name);
  if (!command) throw unknownCommand(name);
  if (has(p, 'help')) {
    out(command.help);
    return EXIT.ok;
  }
  checkFlags(name, p.flags.keys(), command.flags);
  if (has(p, 'fingerprint') && !has(p, 'insecure')) {
    throw new CliError('--fingerprint pins the certificate of a machine in maintenance mode: give --insecure too',
      EXIT.usage);
  }
  const timeout = flag(p, 'timeout');
  const timeoutMs = timeout === undefined ? undefined : parseDuration('timeout', timeout) * 1000;
  const options: ContextOptions = {
    endpoint: flag(p, 'endpoint'), configPath: flag(p, 'config'), context: flag(p, 'context'),
    nodes: flag(p, 'nodes'), insecure: has(p, 'insecure'),
    ...(flag(p, 'fingerprint') ? { fingerprint: flag(p, 'fingerprint')! } : {}),
    warn: (line) => err(`cosictl: ${line}\n`),
  };
  /**
   * A session made when the command first asks for it (once, however many ask at once), closed by `close`.
   * A failed connect is not kept: a later ask tries again. With a wait, an unreachable machine is tried
   * again each second until its time is up, each new reason said.
   */
  const lazySession = (ctx: () => Context) => {
    let made: Session | undefined;
    let connected: Promise<Session> | undefined;
    const open = async (wait?: SessionWait): Promise<Session> => {
      let said = '';
      for (;;) {
        made?.close();
        made = new Session(ctx(), flag(p, 'namespace'), timeoutMs);
        try {
          await made.connect(timeoutMs);
          return made;
        } catch (e) {
          if (!wait || exitCodeOf(e) !== EXIT.unreachable || Date.now() >= wait.until) throw e;
          const why = `the API does not answer yet: ${(e as Error).message.split('\n')[0]}`;
          if (why !== said) wait.progress(why);
          said = why;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    };
    return {
      session: (wait?: SessionWait) => connected ??= open(wait).catch((e: unknown) => {
        connected = undefined;
        throw e;
      }),
      close: () => made?.close(),
    };
  };
  const base = {
    p: { ...p, positional: rest }, out, err,
    table: (header: string[], rows: string[][]) => out(renderTable(header, rows)),
    configPath: flag(p, 'config') ?? defaultConfigPath(), configGiven: has(p, 'config'),
  };
  const nodes = command.fanOut ? contextNodes(options) : undefined;
  if (nodes) {
    // Each machine's own context: its TLS follows its address (a unix socket has none).
    return fanOut(nodes, base, (node) => lazySession(() => loadContext({ ...options, nodes: undefined,
      endpoint: node, warn: node === nodes[0] ? options.warn : undefined })), (io) => command.run(io));
  }
  const one = lazySession(() => {
    const ctx = loadContext(options);
    if (ctx.nodes && ctx.nodes.length > 1) {
      throw new CliError(`${name} works on one machine at a time, not on ${ctx.nodes.join(', ')} `
        + '(give one with --nodes or -e)', EXIT.usage);
    }
    return ctx;
  });
  try {
    return await command.run({ ...base, session: one.session });
  } finally {
    one.close();
  }
}

const unknownCommand = (name: string) => {
  const names = COMMANDS.map((c) => c.name);
  const near = didYouMean(name, names);
  return new CliError(`unknown command "${name}"${near || ` (commands: ${names.join(', ')})`}`, EXIT.usage);
};

export function main(): void {
  cosictl(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (e: unknown) => {
      err(`cosictl: ${(e as Error).message}\n`);
      process.exitCode = exitCodeOf(e);
    },
  ).finally(() => err(timingReport()));
}
