// config: the contexts of cosictl's config file, kubectl's way: view (keys and certificates
// redacted unless --raw), get-contexts, current-context, use-context, set-context and
// delete-context. Needs no machine.
import YAML from 'yaml';
import { flag, has, noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import {
  currentContext, readConfigFile, toAddress, warnUnknownKeys, writeConfigFile, type ConfigFile,
} from '../config.ts';
import { CliError, EXIT } from '../errors.ts';
import { renderTable } from '../output/table.ts';

export const CONFIG_HELP = `usage: cosictl config view [--raw]
       cosictl config get-contexts
       cosictl config current-context
       cosictl config use-context NAME
       cosictl config set-context NAME [--endpoint ADDR] [--namespace NS] [--server-name NAME]
       cosictl config delete-context NAME

Reads and edits cosictl's config file (--config, $COSICTL_CONFIG, or
~/.config/cosictl/config.yaml), which \`cosictl gen config --secrets\` writes. Needs no machine.

view             the file, with each context's CA, certificate and key shown as their size
                 (--raw: as they are)
get-contexts     a table of the contexts; * marks the current one
current-context  the current context's name
use-context      make NAME the current context
set-context      change NAME's endpoint, namespace or server name (a new context if there
                 is none by that name; its CA and client certificate come from gen config)
delete-context   remove NAME (the current one too: the first left becomes current)

environment: COSICTL_CONFIG (the file), COSICTL_ENDPOINT (overrides every context's endpoint).
`;

const SECRET_KEYS = ['ca', 'cert', 'key'] as const;

/** The subcommands, for the error that lists them and for completion. */
const VERBS = [
  { value: 'view', about: 'the config file' }, { value: 'get-contexts', about: 'a table of the contexts' },
  { value: 'current-context', about: 'the current context' }, { value: 'use-context', about: 'make one current' },
  { value: 'set-context', about: 'add or change one' }, { value: 'delete-context', about: 'remove one' },
];

export const configCommand: Command = {
  name: 'config',
  summary: 'config SUBCOMMAND      cosictl\'s contexts: view, get-contexts, use-context, set-context, ...',
  help: CONFIG_HELP,
  flags: ['raw', 'server-name'],
  async completeArg(line, _current, lookups) {
    if (!line.args.length) return { values: VERBS };
    const named = ['use-context', 'set-context', 'delete-context'].includes(line.args[0]!) && line.args.length === 1;
    return { values: named ? lookups.contexts().map((value) => ({ value })) : [] };
  },
  async run({ p, out, err, configPath, configGiven }) {
    const [verb, name, ...extra] = p.positional;
    const file = readConfigFile(configPath, configGiven);
    warnUnknownKeys(file, configPath, (line) => err(`cosictl: ${line}\n`));
    const contexts = file.contexts ?? {};
    const needName = () => {
      if (!name) throw new CliError(`config ${verb}: name a context`, EXIT.usage);
      noArguments(`config ${verb}`, extra);
      return name;
    };
    const known = (n: string) => {
      if (!contexts[n]) {
        const have = Object.keys(contexts).join(', ') || 'none';
        throw new CliError(`context "${n}" is not in ${configPath} (have: ${have})`, EXIT.notFound);
      }
    };
    if (has(p, 'raw') && verb !== 'view') throw new CliError('--raw goes with config view', EXIT.usage);
    const setFlags = ['endpoint', 'namespace', 'server-name'].filter((f) => has(p, f));
    if (setFlags.length && verb !== 'set-context') {
      throw new CliError(`--${setFlags[0]} goes with config set-context here`, EXIT.usage);
    }
    switch (verb) {
      case 'view': {
        const shown: ConfigFile = has(p, 'raw') ? file : {
          ...file,
          contexts: Object.fromEntries(Object.entries(contexts).map(([n, c]) => [n, {
            ...c, ...Object.fromEntries(SECRET_KEYS.filter((k) => c[k]).map((k) => [k, `<${k === 'key'
              ? 'private key' : 'PEM'}, ${c[k]!.length} bytes: --raw shows it>`])),
          }])),
        };
        out(YAML.stringify(shown, { lineWidth: 0 }));
        return EXIT.ok;
      }
      case 'get-contexts': {
        const current = currentContext(file);
        out(renderTable(['CURRENT', 'NAME', 'ENDPOINT', 'NAMESPACE', 'AUTH'], Object.entries(contexts).map(([n, c]) => [
          n === current ? '*' : '', n, c.endpoint ?? c.endpoints?.join(',') ?? '', c.namespace ?? '',
          c.cert && c.key ? 'client certificate' : c.ca ? 'CA only' : 'none',
        ])));
        return EXIT.ok;
      }
      case 'current-context': {
        const current = currentContext(file);
        if (!current) {
          throw new CliError(`${configPath} has no context (make one with cosictl gen config)`, EXIT.notFound);
        }
        out(`${current}\n`);
        return EXIT.ok;
      }
      case 'use-context': {
        const n = needName();
        known(n);
        writeConfigFile(configPath, { ...file, context: n });
        out(`switched to context "${n}"\n`);
        return EXIT.ok;
      }
      case 'set-context': {
        const n = needName();
        const c = { ...(contexts[n] ?? {}) };
        const endpoint = flag(p, 'endpoint');
        const namespace = flag(p, 'namespace');
        const serverName = flag(p, 'server-name');
        if (endpoint !== undefined) c.endpoint = toAddress(endpoint);
        if (namespace !== undefined) {
          if (namespace) c.namespace = namespace;
          else delete c.namespace;
        }
        if (serverName !== undefined) {
          if (serverName) c.serverName = serverName;
          else delete c.serverName;
        }
        writeConfigFile(configPath, { ...file, contexts: { ...contexts, [n]: c } });
        out(`context "${n}" ${contexts[n] ? 'modified' : 'created'}\n`);
        return EXIT.ok;
      }
      case 'delete-context': {
        const n = needName();
        known(n);
        const rest = Object.fromEntries(Object.entries(contexts).filter(([k]) => k !== n));
        const next: ConfigFile = { ...file, contexts: rest };
        if (file.context === n) delete next.context;
        writeConfigFile(configPath, next);
        const now = currentContext(next);
        const after = file.context === n ? `; ${now ? `"${now}" is current now` : 'none is left'}` : '';
        out(`deleted context "${n}"${after}\n`);
        return EXIT.ok;
      }
      default:
        throw new CliError(verb ? `config: unknown subcommand "${verb}" (see cosictl config --help)`
          : `config: give a subcommand: ${VERBS.map((v) => v.value).join(', ')}`, EXIT.usage);
    }
  },
};
