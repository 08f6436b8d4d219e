// appliance: builds your own appliance from its definition (appliance.yaml): `validate` checks it whole, `build`
// makes its images into the project's out/ (image/appliance/build-appliance.ts). Run it from the project's
// directory (or give -f FILE).
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { FORMATS, formatNamed } from '../image/formats/index.ts';
import { buildAppliance } from '../image/appliance/build-appliance.ts';
import { loadDefinition, type ApplianceDefinition } from '../image/appliance/definition.ts';
import { build, signingKeyOf } from './build.ts';
import { step } from './lib/log.ts';

const COMMANDS = ['validate', 'build'] as const;
type CommandName = (typeof COMMANDS)[number];

const EXIT = { ok: 0, refused: 1, usage: 2, failed: 3 } as const;
/** The options each command takes (each followed by its value). */
const OPTIONS: Record<CommandName, readonly string[]> = {
  validate: ['-f', '--file'], build: ['-f', '--file', '--format'],
};

const HELP: Record<'main' | CommandName, string> = {
  main: `usage: appliance <command> [options]

Builds an appliance of your own from its definition, appliance.yaml: your programs (a directory, an
OCI image or a squashfs), the machine config it boots with, kernel arguments, the key that signs its
upgrades and the image formats to make.

commands:
  validate   check appliance.yaml whole: every problem, each with its field
  build      make its images into out/ beside appliance.yaml

  appliance <command> --help   what a command takes

exit codes: 0 done; 1 the definition (or an extension) was refused, every reason printed; 2 bad
usage; 3 the build failed (a tool or the disk: the message says which).
`,
  validate: `usage: appliance validate [-f FILE]

Reads the definition (default: ./appliance.yaml) and checks it whole without building anything: its
fields, the files it names, one source per extension, extension names (none twice, none a built-in
plugin's), each dir: extension's manifest fields, and its machine config as the machine would check it
(no secret written inline). Prints every problem, each with its field, and exits 1; or a summary, 0.
`,
  build: `usage: appliance build [-f FILE] [--format NAME[,NAME...]]

Builds the appliance the definition (default: ./appliance.yaml) declares into out/ beside it: its
extensions into squashfs images (each built again only when its inputs changed), then each format with
the extensions and the first-boot config baked in, and out/manifest.json listing every file with its
sha256. The same inputs give the same bytes; a build with nothing changed says so and does nothing.
Images appear in out/ only once all are whole.

  --format NAMES   instead of the definition's formats: ${FORMATS.map((f) => f.name).join(', ')}, or all
`,
};

function argValue(argv: string[], ...names: string[]): string | undefined {
  const i = argv.findIndex((a) => names.includes(a));
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith('-')) throw new UsageError(`${argv[i]} needs a value`);
  return v;
}

class UsageError extends Error {}

async function loadOrExplain(file: string): Promise<ApplianceDefinition | undefined> {
  const r = await loadDefinition(file);
  if (r.definition) return r.definition;
  process.stderr.write(`appliance: ${file}: refused, ${r.problems.length} problem(s):\n`);
  for (const p of r.problems) process.stderr.write(`  ${p}\n`);
  return undefined;
}

async function validate(argv: string[]): Promise<number> {
  const file = argValue(argv, '-f', '--file') ?? 'appliance.yaml';
  const d = await loadOrExplain(file);
  if (!d) return EXIT.refused;
  const configDocs = d.config.parts.reduce((n, p) => n + p.documents, 0);
  const secrets = d.secrets ? `, secrets from ${relative(dirname(d.file), d.secrets)}` : '';
  process.stdout.write(`${file}: ${d.name} ${d.version}: valid\n`
    + `  extensions: ${d.extensions.map((e) => `${e.name} (${Object.keys(e.source)[0]})`).join(', ') || 'none'}\n`
    + `  config: ${configDocs} document(s)${secrets}\n`
    + `  formats: ${d.formats.join(', ')}\n`);
  return EXIT.ok;
}

async function buildCommand(argv: string[]): Promise<number> {
  const file = argValue(argv, '-f', '--file') ?? 'appliance.yaml';
  const formatArg = argValue(argv, '--format');
  const asked = formatArg === undefined ? undefined
    : formatArg.split(',').includes('all') ? FORMATS.map((f) => f.name) : formatArg.split(',').filter(Boolean);
  const unknown = (asked ?? []).filter((n) => !formatNamed(n));
  if (unknown.length) {
    throw new UsageError(`--format: unknown ${unknown.join(', ')}; one of ${FORMATS.map((f) => f.name).join(', ')}`);
  }
  const d = await loadOrExplain(file);
  if (!d) return EXIT.refused;
  const names = asked ?? d.formats;
  const started = performance.now();
  const system = await build(d.signingKey ? { signingKey: d.signingKey } : {});
  const released = JSON.parse(readFileSync(system.manifest, 'utf8')) as { commit: string };
  const outDir = join(dirname(d.file), 'out');
  const s = step('appliance');
  const r = await buildAppliance({
    definition: d, formats: names.map((n) => formatNamed(n)!), outDir,
    system: { kernel: system.kernel, initramfs: system.initramfs, cmdline: readFileSync(system.cmdline, 'utf8'),
      commit: released.commit },
    signingKey: () => signingKeyOf(d.signingKey), epoch: Number(process.env.SOURCE_DATE_EPOCH ?? 0),
    progress: (m) => s.info(m),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!r.built) process.stdout.write(`${d.name} ${d.version}: nothing changed since the last build (${seconds} s)\n`);
  else process.stdout.write(`${d.name} ${d.version}: built in ${seconds} s\n`);
  for (const a of r.artifacts) {
    process.stdout.write(`  ${relative(process.cwd(), join(outDir, a.file))}  ${(a.size / 1e6).toFixed(1)} MB  `
      + `sha256 ${a.sha256}\n`);
  }
  return EXIT.ok;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    process.stdout.write(topic && (COMMANDS as readonly string[]).includes(topic) ? HELP[topic as CommandName]
      : HELP.main);
    return name ? EXIT.ok : EXIT.usage;
  }
  if (!(COMMANDS as readonly string[]).includes(name)) {
    process.stderr.write(`appliance: unknown command "${name}"; one of ${COMMANDS.join(', ')} (appliance --help)\n`);
    return EXIT.usage;
  }
  const command = name as CommandName;
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(HELP[command]);
    return EXIT.ok;
  }
  try {
    for (let i = 0; i < rest.length; i += 2) {
      if (!OPTIONS[command].includes(rest[i]!)) {
        throw new UsageError(`"${rest[i]}": not an option of ${command} (${OPTIONS[command].join(', ')})`);
      }
    }
    return command === 'validate' ? await validate(rest) : await buildCommand(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`appliance ${command}: ${e.message} (appliance ${command} --help)\n`);
      return EXIT.usage;
    }
    const refused = (e as Error).name === 'ExtensionRefused' || (e as Error).name === 'OciRefused';
    process.stderr.write(`appliance ${command}: ${(e as Error).message}\n`);
    return refused ? EXIT.refused : EXIT.failed;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main(process.argv.slice(2)));
