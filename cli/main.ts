// cosictl: the client of the appliance's COSI API. Runs on the user's machine.
import { VERSION, COMMIT } from '../init/version.ts';
import { flag, has, parseArgs, type FlagSpec } from './args.ts';
import { loadContext } from './config.ts';
import { CliError, EXIT, exitCodeOf } from './errors.ts';
import { apiResources } from './commands/api-resources.ts';
import { APPLY_CONFIG_HELP, APPLY_HELP, applyConfig } from './commands/apply.ts';
import { validate, VALIDATE_HELP } from './commands/validate.ts';
import { del, DELETE_HELP } from './commands/delete.ts';
import { get, GET_HELP } from './commands/get.ts';
import { install, INSTALL_FLAGS, INSTALL_HELP } from './commands/install.ts';
import {
  rollback, ROLLBACK_FLAGS, ROLLBACK_HELP, upgrade, UPGRADE_FLAGS, UPGRADE_HELP,
} from './commands/upgrade.ts';
import { genCommand, GEN_HELP } from './commands/gen.ts';
import { parseDuration } from './duration.ts';
import { Session } from './session.ts';

const HELP = `usage: cosictl [global flags] COMMAND [args]

Reads, watches and declares the appliance's resources over the COSI API.

commands:
  get TYPE [ID...]       show resources (table, -o wide|yaml|json|name|jsonpath=..., --watch,
                         -l selectors, --sort-by, -L label columns)
  apply -f FILE          create or update resources from multi-document YAML (kept in the machine config)
  apply-config -f FILE   replace the whole machine config (--dry-run, --try 60s, --confirm)
  validate -f FILE       check a machine config offline
  delete TYPE ID...      tear down and destroy resources
  install --disk PATH    install the machine's build to a disk (or --serial, --model, --size;
                         --wipe, --reboot), printing progress until done
  upgrade --image FILE|URL  write a signed upgrade bundle to the other boot slot and reboot into it
  rollback               boot the other slot (the previous version) from now on
  api-resources          the resource types the machine serves
  version                client and machine versions
  gen secrets|config     make a machine's API secrets, a starting config and a cosictl context

global flags:
  -e, --endpoint ADDR    HOST[:PORT] or a unix socket path (default: config, then 127.0.0.1:50000)
      --config FILE      config file (default ~/.config/cosictl/config.yaml; $COSICTL_CONFIG)
      --context NAME     context in the config file
  -i, --insecure         do not verify the machine's certificate and send none: a machine in
                         maintenance mode (it prints its certificate's fingerprint on the console)
      --fingerprint FP   with --insecure: the machine's certificate must have this SHA-256
                         fingerprint (AA:BB:..., as the console and \`get apicert\` show it)
  -n, --namespace NS     namespace (default: the type's default namespace)
      --timeout DURATION give up when the machine has not answered within it (e.g. 10s; default:
                         5s to connect, then no limit)
  -h, --help             help (also after a command: cosictl get --help)

exit codes: 0 ok, 1 the API refused or failed, 2 bad usage, 3 invalid input (nothing
written), 4 not found, 5 API unreachable.
`;

const FLAGS: FlagSpec[] = [
  { name: 'endpoint', short: 'e', value: true }, { name: 'config', value: true }, { name: 'context', value: true },
  { name: 'namespace', short: 'n', value: true }, { name: 'timeout', value: true },
  { name: 'output', short: 'o', value: true },
  { name: 'selector', short: 'l', value: true, repeat: true }, { name: 'id-regexp', value: true },
  { name: 'watch', short: 'w' }, { name: 'sort-by', value: true }, { name: 'show-labels' },
  { name: 'label-columns', short: 'L', value: true, repeat: true },
  { name: 'filename', short: 'f', value: true, repeat: true },
  { name: 'dry-run' }, { name: 'try', value: true }, { name: 'confirm' },
  { name: 'insecure', short: 'i' }, { name: 'fingerprint', value: true },
  { name: 'secrets', value: true }, { name: 'role', value: true }, { name: 'algorithm', value: true },
  { name: 'days', value: true }, { name: 'force' }, { name: 'server-name', value: true },
  { name: 'disk', value: true }, { name: 'serial', value: true }, { name: 'model', value: true },
  { name: 'size', value: true }, { name: 'wipe' }, { name: 'reboot' }, { name: 'source', value: true },
  { name: 'id', value: true }, { name: 'no-wait' },
  { name: 'image', value: true }, { name: 'no-reboot' }, { name: 'tries', value: true },
  { name: 'health-timeout', value: true },
  { name: 'help', short: 'h' },
];
/** Flags only some commands take. */
const COMMAND_FLAGS: Record<string, readonly string[]> = {
  install: INSTALL_FLAGS, upgrade: UPGRADE_FLAGS, rollback: ROLLBACK_FLAGS,
};

const out = (s: string) => { process.stdout.write(s); };
const err = (s: string) => { process.stderr.write(s); };

export async function cosictl(argv: string[]): Promise<number> {
  const p = parseArgs(argv, FLAGS);
  const [command, ...rest] = p.positional;
  const helpFor: Record<string, string> = {
    get: GET_HELP, apply: APPLY_HELP, 'apply-config': APPLY_CONFIG_HELP, validate: VALIDATE_HELP, delete: DELETE_HELP,
    gen: GEN_HELP, install: INSTALL_HELP, upgrade: UPGRADE_HELP, rollback: ROLLBACK_HELP,
  };
  if (has(p, 'help') || !command || command === 'help') {
    out((command && helpFor[command]) || HELP);
    return command || has(p, 'help') ? EXIT.ok : EXIT.usage;
  }
  const known = [
    'get', 'apply', 'apply-config', 'validate', 'delete', 'install', 'upgrade', 'rollback', 'api-resources', 'version',
    'gen',
  ];
  if (!known.includes(command)) throw new CliError(
    `unknown command "${command}" (commands: ${known.join(', ')})`, EXIT.usage,
  );
  const only = (names: string[]) => {
    for (const n of ['dry-run', 'try', 'confirm']) {
      if (has(p, n) && !names.includes(n)) throw new CliError(`--${n} is not a flag of ${command}`, EXIT.usage);
    }
  };
  only(command === 'apply' ? ['dry-run', 'try'] : command === 'apply-config' ? ['dry-run', 'try', 'confirm'] : []);
  for (const [owner, names] of Object.entries(COMMAND_FLAGS)) {
    for (const n of names) {
      if (!has(p, n) || COMMAND_FLAGS[command]?.includes(n)) continue;
      const of = Object.keys(COMMAND_FLAGS).filter((c) => COMMAND_FLAGS[c]!.includes(n)).join(' and ');
      throw new CliError(`--${n} is a flag of ${of || owner}, not of ${command}`, EXIT.usage);
    }
  }
  if (command === 'validate') return validate({ ...p, positional: rest }, out, err);
  if (command === 'gen') return genCommand({ ...p, positional: rest }, flag(p, 'config'), out, err);
  for (const n of ['secrets', 'role', 'algorithm', 'days', 'force', 'server-name']) {
    if (has(p, n)) throw new CliError(`--${n} is a flag of gen, not of ${command}`, EXIT.usage);
  }
  if (has(p, 'fingerprint') && !has(p, 'insecure')) {
    throw new CliError('--fingerprint pins the certificate of a machine in maintenance mode: give --insecure too',
      EXIT.usage);
  }
  const ctx = loadContext({
    endpoint: flag(p, 'endpoint'), configPath: flag(p, 'config'), context: flag(p, 'context'),
    insecure: has(p, 'insecure'), ...(flag(p, 'fingerprint') ? { fingerprint: flag(p, 'fingerprint')! } : {}),
    warn: (line) => err(`cosictl: ${line}\n`),
  });
  const timeout = flag(p, 'timeout');
  const timeoutMs = timeout === undefined ? undefined : parseDuration('timeout', timeout) * 1000;
  const session = new Session(ctx, flag(p, 'namespace'), timeoutMs);
  try {
    await session.connect(timeoutMs);
    const sub = { ...p, positional: rest };
    switch (command) {
      case 'get': return await get(session, sub, out, err);
      case 'apply': return await applyConfig(session, sub, 'merge', out, err);
      case 'apply-config': return await applyConfig(session, sub, 'replace', out, err);
      case 'delete': return await del(session, sub, out);
      case 'install': return await install(session, sub, out, err);
      case 'upgrade': return await upgrade(session, sub, out, err);
      case 'rollback': return await rollback(session, sub, out, err);
      case 'api-resources': return await apiResources(session, out);
      default: {
        // The running system: the only Version, or the running slot's on an installed disk.
        const all = await session.state.list({ namespace: 'runtime', type: 'Versions.runtime.appliance.dev' });
        const v = all.find((r) => (r.spec as { running?: boolean }).running) ?? all[0];
        out(`client: cosictl ${VERSION} (${COMMIT})\nmachine: ${JSON.stringify(v?.spec ?? null)}\n`);
        return EXIT.ok;
      }
    }
  } finally {
    session.close();
  }
}

export function main(): void {
  cosictl(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (e: unknown) => { err(`cosictl: ${(e as Error).message}\n`); process.exitCode = exitCodeOf(e); },
  );
}
