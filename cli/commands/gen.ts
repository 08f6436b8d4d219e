// gen: what a new machine needs, made on the user's side. `gen secrets` makes the API's
// CA and a client certificate per role; `gen config` prints a commented starting machine
// config and, given secrets, embeds the CA in it and writes the matching cosictl context.
import { existsSync, writeFileSync } from 'node:fs';
import { apiCaDocument, generateSecrets, secretsFromYaml, secretsToYaml } from '../../machinery/pki/secrets.ts';
import { ROLES, type Role } from '../../machinery/model/access.ts';
import type { KeyAlgorithm } from '../../machinery/pki/certificate.ts';
import { flag, has, type Parsed, noArguments } from '../args.ts';
import {
  contextOfSecrets, DEFAULT_ENDPOINT, defaultConfigPath, readConfigFile, toAddress, writeConfigFile,
} from '../config.ts';
import { CliError, EXIT } from '../errors.ts';
import { readInput } from '../read-input.ts';

export const GEN_HELP = `usage: cosictl gen secrets [-o FILE] [--algorithm ecdsa-p256|ed25519] [--days N] [--force]
       cosictl gen config [--secrets FILE] [-o FILE] [--endpoint HOST[:PORT]] [--role ROLE]
                          [--context NAME] [--server-name NAME]

gen secrets   makes a machine's API secrets: a certificate authority and a client
              certificate per role (admin, operator, reader), into FILE (default
              secrets.yaml, mode 0600; --force overwrites). The CA is valid 10 years,
              client certificates --days (default 365).
gen config    prints a commented starting machine config (to FILE with -o). With
              --secrets FILE it holds the CA (ApiCertificateAuthority "api": the machine
              then requires mutual TLS), and a cosictl context NAME (default
              "appliance") is written into the cosictl config file (--config, default
              ~/.config/cosictl/config.yaml) and made current: --endpoint (default
              127.0.0.1:50000), the CA, and the client certificate of --role (default
              admin). --server-name sets the name the machine's certificate is checked
              against when the endpoint is a port forward (an address the machine has,
              such as 10.0.2.15, or its hostname).
`;

/** The flags only gen takes (besides the global --endpoint and --context it writes into a context). */
export const GEN_FLAGS = ['secrets', 'role', 'algorithm', 'days', 'force', 'server-name', 'output'];

const write = (path: string, text: string, force: boolean) => {
  if (existsSync(path) && !force) {
    throw new CliError(`${path} exists: give --force to overwrite it (its secrets would be lost)`, EXIT.usage);
  }
  writeFileSync(path, text, { mode: 0o600 });
};

const EXAMPLES = `# More of what a machine can be told (cosictl api-resources lists every type;
# docs/resources.md documents each field). Uncomment and edit:
#
# ---
# metadata: {type: hostnamespec, id: mine}
# spec: {hostname: node1}
# ---
# metadata: {type: addressspec, id: lan}
# spec: {address: 192.0.2.10/24, link: eth0}
# ---
# metadata: {type: routespec, id: default}
# spec: {destination: 0.0.0.0/0, gateway: 192.0.2.1, link: eth0}
# ---
# metadata: {type: dhcpspec, id: eth0}
# spec: {enabled: false}
# ---
# metadata: {type: resolverspec, id: mine}
# spec: {servers: [192.0.2.53]}
# ---
# metadata: {type: timeservers, id: user}
# spec: {servers: [192.0.2.123]}
`;

export function genCommand(p: Parsed, configPath: string | undefined, out: (s: string) => void,
  err: (s: string) => void): number {
  const [what, ...extra] = p.positional;
  noArguments(`gen ${what}`, extra);
  if (what === 'secrets') {
    const algorithm = flag(p, 'algorithm') ?? 'ecdsa-p256';
    if (algorithm !== 'ecdsa-p256' && algorithm !== 'ed25519') {
      throw new CliError(`--algorithm: ecdsa-p256 or ed25519, not "${algorithm}"`, EXIT.usage);
    }
    const days = Number(flag(p, 'days') ?? 365);
    if (!Number.isInteger(days) || days < 1 || days > 3650) {
      throw new CliError(`--days: a whole number of days from 1 to 3650, not "${flag(p, 'days')}"`, EXIT.usage);
    }
    const file = flag(p, 'output') ?? 'secrets.yaml';
    write(file, secretsToYaml(generateSecrets({ algorithm: algorithm as KeyAlgorithm, clientDays: days })),
      has(p, 'force'));
    err(`secrets written to ${file} (keep it secret: it is admin of every machine that trusts this CA)\n`);
    return EXIT.ok;
  }
  if (what === undefined) throw new CliError('gen: give what to make: secrets or config', EXIT.usage);
  if (what !== 'config') throw new CliError(`gen: secrets or config, not "${what}"`, EXIT.usage);
  const secretsFile = flag(p, 'secrets');
  const contextFlag = ['role', 'server-name', 'endpoint', 'context'].find((f) => has(p, f));
  if (!secretsFile && contextFlag) {
    throw new CliError(`--${contextFlag} shapes the cosictl context gen config writes from --secrets FILE: give `
      + '--secrets too', EXIT.usage);
  }
  let config = '# A machine config (cosictl gen config): apply it with `cosictl apply-config -f FILE`, or\n'
    + '# give it to the machine at boot (fw_cfg, NoCloud user-data, a config URL, ...).\n';
  if (!secretsFile) {
    config += '# It has no API secrets: the machine stays in maintenance mode (make some with\n'
      + '# `cosictl gen secrets` and run `cosictl gen config --secrets secrets.yaml`).\n' + EXAMPLES;
  } else {
    const secrets = secretsFromYaml(readInput(secretsFile).toString('utf8'), secretsFile);
    const role = (flag(p, 'role') ?? 'admin') as Role;
    if (!ROLES.includes(role)) throw new CliError(`--role: one of ${ROLES.join(', ')}, not "${role}"`, EXIT.usage);
    config += '# It holds the API CA (keep it secret): the machine issues its server certificate from it\n'
      + '# and accepts only clients whose certificates it signed.\n---\n' + apiCaDocument(secrets) + EXAMPLES;
    const path = configPath ?? defaultConfigPath();
    const name = flag(p, 'context') ?? 'appliance';
    const file = readConfigFile(path, false);
    const serverName = flag(p, 'server-name');
    file.contexts = {
      ...file.contexts,
      [name]: {
        ...contextOfSecrets(secrets, role, toAddress(flag(p, 'endpoint') ?? DEFAULT_ENDPOINT)),
        ...(serverName ? { serverName } : {}),
      },
    };
    file.context = name;
    writeConfigFile(path, file);
    err(`cosictl context "${name}" (role ${role}) written to ${path} and made current\n`);
  }
  const output = flag(p, 'output');
  if (output) {
    write(output, config, has(p, 'force'));
    err(`machine config written to ${output}\n`);
  }
  else out(config);
  return EXIT.ok;
}
