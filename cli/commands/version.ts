// version: this cosictl's version and the machine's (its running system's Version resource).
// The client's is printed before the machine is asked, so it shows even when the machine
// cannot be reached (the command then fails as any other would).
import YAML from 'yaml';
import { COMMIT, VERSION } from '../../machinery/version.ts';
import type { VersionSpec } from '../../proto/gen/spec-types.ts';
import { flag, has } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, EXIT } from '../errors.ts';
import { RUNTIME_NS, VERSION_TYPE } from '../../proto/gen/resource-types.ts';

export const VERSION_HELP = `usage: cosictl version [--client] [--short] [-o json|yaml]

Prints this cosictl's version and the machine's: the version, commit, kernel and Node
of the system it runs, and on an installed machine its boot slot.

flags:
      --client           this cosictl's version only (no machine needed)
      --short            versions only, one line each
  -o, --output FORMAT    json or yaml: {clientVersion, serverVersion}

cosictl --version prints the client's version alone.
`;

export const clientLine = () => `cosictl ${VERSION} (commit ${COMMIT})`;

/** The machine's slot, in words: "A, running, boots by default, good". */
function slotWords(v: VersionSpec): string {
  const parts = [v.slot, v.running ? 'running' : '', v.defaultBoot ? 'boots by default' : '',
    v.trying ? `on trial (${v.triesLeft} tries left)` : v.good ? 'good' : '', v.problem].filter(Boolean);
  return parts.join(', ');
}

export const versionCommand: Command = {
  name: 'version',
  summary: 'version                client and machine versions',
  help: VERSION_HELP,
  flags: ['client', 'short', 'output'],
  fanOut: true,
  async run({ p, out, session }) {
    const o = flag(p, 'output');
    if (o !== undefined && o !== 'json' && o !== 'yaml') {
      throw new CliError(`--output: version prints json or yaml, got "${o}"`, EXIT.usage);
    }
    if (p.positional.length) throw new CliError(`version takes no arguments, got "${p.positional[0]}"`, EXIT.usage);
    const client = { version: VERSION, commit: COMMIT, node: process.version, platform: process.platform };
    const short = has(p, 'short');
    if (!o) out(short ? `client: ${VERSION}\n` : `Client:\n  ${clientLine()}\n`);
    let server: VersionSpec | undefined;
    if (!has(p, 'client')) {
      const s = await session();
      const all = await s.state.list({ namespace: RUNTIME_NS, type: VERSION_TYPE });
      // The running system: the only Version, or the running slot's on an installed disk.
      server = (all.find((r) => (r.spec as VersionSpec).running) ?? all[0])?.spec as VersionSpec | undefined;
      if (!o) {
        if (!server) out(short ? 'server: unknown\n' : 'Server:\n  no Version resource\n');
        else if (short) out(`server: ${server.version}\n`);
        else {
          out(`Server:\n  appliance ${server.version} (commit ${server.commit})\n`
            + `  kernel ${server.kernel}, node ${server.node}, ${server.arch}\n`
            + (server.slot ? `  slot ${slotWords(server)}\n` : ''));
        }
      }
    }
    if (o) {
      const doc = { clientVersion: client, ...(server ? { serverVersion: server } : {}) };
      out(o === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : YAML.stringify(doc));
    }
    return EXIT.ok;
  },
};
