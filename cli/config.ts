// config: where cosictl connects. Precedence: --endpoint, $COSICTL_ENDPOINT, the
// config file (--config, $COSICTL_CONFIG, ~/.config/cosictl/config.yaml), 127.0.0.1:50000.
//
// Config file (YAML):
//   context: lab            # optional; the first context otherwise
//   contexts:
//     lab: { endpoint: 192.0.2.10:50000, namespace: config }
//     vm:  { endpoint: 127.0.0.1:50000 }
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { CliError, EXIT } from './errors.ts';

export interface Context { endpoint: string; namespace?: string }
interface ConfigFile { context?: string; contexts?: Record<string, Context> }

export const DEFAULT_ENDPOINT = '127.0.0.1:50000';

export function defaultConfigPath(): string {
  return process.env.COSICTL_CONFIG
    ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'cosictl', 'config.yaml');
}

export function loadContext(o: { endpoint?: string; configPath?: string; context?: string }): Context {
  const path = o.configPath ?? defaultConfigPath();
  let file: ConfigFile = {};
  if (existsSync(path)) {
    try { file = (YAML.parse(readFileSync(path, 'utf8')) ?? {}) as ConfigFile; } catch (e) {
      throw new CliError(`config ${path}: ${(e as Error).message}`, EXIT.usage);
    }
  } else if (o.configPath) throw new CliError(`config ${path}: no such file`, EXIT.usage);
  const names = Object.keys(file.contexts ?? {});
  const name = o.context ?? file.context ?? names[0];
  if (o.context && !file.contexts?.[o.context]) throw new CliError(
    `context "${o.context}" is not in ${path} (have: ${names.join(', ') || 'none'})`, EXIT.usage,
  );
  const ctx = name ? file.contexts?.[name] : undefined;
  const endpoint = o.endpoint ?? process.env.COSICTL_ENDPOINT ?? ctx?.endpoint ?? DEFAULT_ENDPOINT;
  return { endpoint: toAddress(endpoint), ...(ctx?.namespace ? { namespace: ctx.namespace } : {}) };
}

/** "host:port", "unix:///path" or a plain socket path. */
export function toAddress(endpoint: string): string {
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  if (!endpoint.startsWith('unix:') && !/:\d+$/.test(endpoint)) return `${endpoint}:50000`;
  return endpoint;
}
