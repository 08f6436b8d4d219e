// config: where cosictl connects and how it proves who it is. Precedence for the
// endpoint: --endpoint, $COSICTL_ENDPOINT, the context, 127.0.0.1:50000. The config file
// is --config, $COSICTL_CONFIG, or ~/.config/cosictl/config.yaml; `cosictl gen config
// --secrets` writes a context into it.
//
// Config file (YAML):
//   context: lab            # optional; the first context otherwise
//   contexts:
//     lab:
//       endpoint: 192.0.2.10:50000
//       # or several machines, each command that reads going to all (cosictl --nodes picks others):
//       # endpoints: [192.0.2.10, 192.0.2.11]
//       namespace: config   # optional
//       ca: |               # the machine's API CA (PEM): the server must chain to it
//         -----BEGIN CERTIFICATE-----
//       cert: |             # this client's certificate (its Organization is its role) and key
//       key: |
//       serverName: node1   # optional: the name the server certificate must carry (port forwards)
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import type { ChannelTls } from '../cosi/remote/grpc/client.ts';
import type { Role } from '../machinery/model/access.ts';
import type { MachineSecrets } from '../machinery/pki/secrets.ts';
import { CliError, EXIT } from './errors.ts';

export interface ContextEntry {
  endpoint?: string;
  /** Several machines sharing the CA and credentials: commands that read fan out to all of them. */
  endpoints?: string[];
  namespace?: string;
  ca?: string;
  cert?: string;
  key?: string;
  serverName?: string;
}

export interface Context {
  endpoint: string;
  /**
   * The machines a command goes to when several are meant (--nodes, or the context's `endpoints`): each
   * HOST:PORT, `endpoint` being the first. Undefined when one machine is meant.
   */
  nodes?: string[];
  namespace?: string;
  /** How to reach the API: always TLS on TCP (verified unless insecure). */
  tls?: ChannelTls;
}

export interface ConfigFile { context?: string; contexts?: Record<string, ContextEntry> }

export const DEFAULT_ENDPOINT = '127.0.0.1:50000';

/** The context that reaches `endpoint` as `role` with a secrets file's CA and that role's client certificate. */
export const contextOfSecrets = (s: MachineSecrets, role: Role, endpoint: string): ContextEntry => ({
  endpoint, ca: s.ca.certificate, cert: s.clients[role].certificate, key: s.clients[role].key,
});
const KNOWN_KEYS = new Set(['endpoint', 'endpoints', 'namespace', 'ca', 'cert', 'key', 'serverName']);
const KNOWN_FILE_KEYS = new Set(['context', 'contexts']);

/** A misspelt key would be silently ignored: each unknown one is warned about, with where it is. */
export function warnUnknownKeys(file: ConfigFile, path: string, warn: (line: string) => void): void {
  for (const k of Object.keys(file)) {
    if (!KNOWN_FILE_KEYS.has(k)) warn(`config ${path}: unknown key "${k}" ignored (known: context, contexts)`);
  }
  for (const [name, ctx] of Object.entries(file.contexts ?? {})) {
    for (const k of Object.keys(ctx ?? {})) {
      if (!KNOWN_KEYS.has(k)) {
        warn(`config ${path}: context "${name}": unknown key "${k}" ignored (known: ${[...KNOWN_KEYS].join(', ')})`);
      }
    }
  }
}

export function defaultConfigPath(): string {
  return process.env.COSICTL_CONFIG
    ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'cosictl', 'config.yaml');
}

export function readConfigFile(path: string, required: boolean): ConfigFile {
  if (!existsSync(path)) {
    if (required) throw new CliError(`config ${path}: no such file`, EXIT.usage);
    return {};
  }
  try {
    return (YAML.parse(readFileSync(path, 'utf8')) ?? {}) as ConfigFile;
  } catch (e) {
    throw new CliError(`config ${path}: ${(e as Error).message}`, EXIT.usage);
  }
}

/** Writes the config file, readable by its owner only (it holds a private key). */
export function writeConfigFile(path: string, file: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, YAML.stringify(file, { lineWidth: 0 }), { mode: 0o600 });
  chmodSync(path, 0o600);
}

export interface ContextOptions {
  endpoint?: string;
  /** --nodes: the machines to go to, comma-separated; the context's credentials are used for each. */
  nodes?: string;
  configPath?: string;
  context?: string;
  /** Do not verify the server (maintenance mode); optionally pin its certificate's fingerprint. */
  insecure?: boolean;
  fingerprint?: string;
  warn?: (line: string) => void;
}

/** The context cosictl uses when --context is not given: the file's `context`, else the first. */
export const currentContext = (f: ConfigFile): string | undefined => f.context ?? Object.keys(f.contexts ?? {})[0];

/** The config file's context that `o` names (or the current one), with where it came from. */
function chosenContext(o: ContextOptions) {
  const path = o.configPath ?? defaultConfigPath();
  // A file the user named (--config, $COSICTL_CONFIG) must be there: a typo is not "a context without a CA".
  if (!o.configPath && process.env.COSICTL_CONFIG !== undefined && !existsSync(path)) {
    throw new CliError(`$COSICTL_CONFIG names ${path}: no such file`, EXIT.usage);
  }
  const file = readConfigFile(path, !!o.configPath);
  const names = Object.keys(file.contexts ?? {});
  const name = o.context ?? currentContext(file);
  if (o.context && !file.contexts?.[o.context]) throw new CliError(
    `context "${o.context}" is not in ${path} (have: ${names.join(', ') || 'none'})`, EXIT.usage,
  );
  return { file, path, name, ctx: name ? file.contexts?.[name] : undefined };
}

/**
 * The machines a command that reads goes to when several are meant (--nodes, a context's `endpoints`), else
 * undefined. Asks for no credentials: a command that then needs no machine (version --client) still runs.
 */
export function contextNodes(o: ContextOptions): string[] | undefined {
  const { path, name, ctx } = chosenContext(o);
  return nodesOf(o, ctx, name, path);
}

export function loadContext(o: ContextOptions): Context {
  const { file, path, name, ctx } = chosenContext(o);
  if (o.warn) warnUnknownKeys(file, path, o.warn);
  const nodes = nodesOf(o, ctx, name, path);
  const endpoint = nodes?.[0]
    ?? toAddress(o.endpoint ?? process.env.COSICTL_ENDPOINT ?? ctx?.endpoint ?? DEFAULT_ENDPOINT);
  const tls: ChannelTls | undefined = endpoint.startsWith('unix://') ? undefined : o.insecure
    ? { insecure: true, ...(o.fingerprint ? { fingerprint: o.fingerprint } : {}) }
    : {
      ...(ctx?.ca ? { ca: ctx.ca } : {}), ...(ctx?.cert ? { cert: ctx.cert } : {}),
      ...(ctx?.key ? { key: ctx.key } : {}),
      ...(ctx?.serverName ? { serverName: ctx.serverName } : {}),
    };
  if (tls && !tls.insecure && !tls.ca) {
    const where = existsSync(path) ? `the context ${name ? `"${name}" ` : ''}in ${path} has no \`ca\``
      : `there is no config file at ${path}`;
    throw new CliError(`no CA to check ${endpoint} with: ${where} (make one with \`cosictl gen config --secrets\`), `
      + 'or use --insecure for a machine in maintenance mode', EXIT.usage);
  }
  return {
    endpoint, ...(nodes ? { nodes } : {}), ...(ctx?.namespace ? { namespace: ctx.namespace } : {}),
    ...(tls ? { tls } : {}),
  };
}

/**
 * The machines meant when several are: --nodes (not with --endpoint), else the context's `endpoints` unless an
 * endpoint is given (--endpoint, $COSICTL_ENDPOINT), which means that one machine.
 */
function nodesOf(
  o: ContextOptions, ctx: ContextEntry | undefined, name: string | undefined, path: string,
): string[] | undefined {
  if (o.nodes !== undefined) {
    if (o.endpoint !== undefined) throw new CliError('--nodes and --endpoint: give one of them', EXIT.usage);
    const list = o.nodes.split(',').map((n) => n.trim());
    if (list.some((n) => !n)) throw new CliError(`--nodes "${o.nodes}": an empty node in the list`, EXIT.usage);
    return oneFingerprint(o, [...new Set(list.map(toAddress))]);
  }
  if (!ctx?.endpoints || o.endpoint !== undefined || process.env.COSICTL_ENDPOINT) return undefined;
  if (ctx.endpoint !== undefined) {
    throw new CliError(`context "${name}" in ${path} has both endpoint and endpoints: keep one`, EXIT.usage);
  }
  if (!Array.isArray(ctx.endpoints) || !ctx.endpoints.length || ctx.endpoints.some((e) => typeof e !== 'string')) {
    throw new CliError(`context "${name}" in ${path}: endpoints must be a list of HOST[:PORT]`, EXIT.usage);
  }
  return oneFingerprint(o, [...new Set(ctx.endpoints.map(toAddress))]);
}

/** --fingerprint pins one machine's certificate: it cannot be every node's. */
function oneFingerprint(o: ContextOptions, nodes: string[]): string[] {
  if (o.fingerprint && nodes.length > 1) {
    throw new CliError(`--fingerprint pins one machine's certificate, not those of ${nodes.join(', ')}`, EXIT.usage);
  }
  return nodes;
}

/** "host:port", "unix:///path" or a plain socket path. */
export function toAddress(endpoint: string): string {
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  if (!endpoint.startsWith('unix:') && !/:\d+$/.test(endpoint)) return `${endpoint}:50000`;
  return endpoint;
}
