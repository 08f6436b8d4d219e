// command: the `appliance` command's words. `init` scaffolds a project (scaffold.ts), `validate` checks its
// appliance.yaml whole, `build` makes its images into the project's out/ (image/appliance/build-appliance.ts), `run`
// boots them in QEMU (run-vm.ts), `push` swaps changed programs into a running machine (push.ts). Where the system
// it builds on comes from is the host's: the repository builds it (scripts/appliance.ts), the package carries it
// (package-main.ts).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { FORMATS, formatNamed } from '../../image/formats/index.ts';
import { ApplianceRefused, buildAppliance, type ApplianceBuild } from '../../image/appliance/build-appliance.ts';
import { loadDefinition, type ApplianceDefinition } from '../../image/appliance/definition.ts';
import { openSystemKit } from '../../image/appliance/system-kit.ts';
import { developmentSigningKey, loadSigningKey } from '../../image/signing-key.ts';
import { buildDerivedKernel } from '../kernel.ts';
import type { SigningKey } from '../../image/formats/format.ts';
import { step } from '../lib/log.ts';
import { scaffoldProject, ScaffoldRefused } from './scaffold.ts';
import { DISK_FORMATS, runAppliance } from './run-vm.ts';
import { pushExtensions, PushRefused } from './push.ts';
import { releaseMain, RELEASE_HELP } from './release.ts';
import { UPGRADE_BUNDLE } from '../../image/formats/upgrade.ts';
import { loadContext } from '../../cli/config.ts';
import { CliError } from '../../cli/errors.ts';

export interface ApplianceHost {
  /** The system kit's folder (image/appliance/system-kit.ts): what every image is built on. */
  systemKit(progress: (message: string) => void): Promise<string>;
  /** The example program `init` puts in a new project (image/appliance/example/hello-web.c), built. */
  exampleProgram(): Promise<string>;
  /** appliance.yaml's JSON Schema, for editors. */
  schemaFile: string;
  /** How the person runs this command and cosictl where they are (in messages). */
  invocation: string;
  cosictl: string;
}

const COMMANDS = ['init', 'validate', 'build', 'run', 'push', 'release'] as const;
type CommandName = (typeof COMMANDS)[number];

export const EXIT = { ok: 0, refused: 1, usage: 2, failed: 3 } as const;
/** The options each command takes: those with a value, then the flags. */
const OPTIONS: Record<CommandName, { values: readonly string[]; flags: readonly string[] }> = {
  init: { values: [], flags: [] },
  validate: { values: ['-f', '--file'], flags: [] },
  build: { values: ['-f', '--file', '--format'], flags: [] },
  run: { values: ['-f', '--file', '--format', '--memory'], flags: ['--fresh', '--no-build'] },
  push: { values: ['-f', '--file', '--config', '--context', '-e', '--endpoint'], flags: ['--persist'] },
  // Its own words and options (release.ts).
  release: { values: [], flags: [] },
};

const HELP: Record<'main' | CommandName, string> = {
  release: RELEASE_HELP,
  main: `usage: appliance <command> [options]

Builds an appliance of your own from its definition, appliance.yaml: your programs (a directory, an
OCI image or a squashfs), the machine config it boots with, kernel arguments, the key that signs its
upgrades and the image formats to make.

commands:
  init       make a new appliance project: appliance.yaml, an example program, secrets, a README
  validate   check appliance.yaml whole: every problem, each with its field
  build      make its images into out/ beside appliance.yaml
  run        build, then boot the disk image in QEMU with the definition's port forwards
  push       build changed programs and swap them into a running machine, without a reboot
  release    publish its upgrades to a TUF update repository its machines poll, in staged waves

  appliance <command> --help   what a command takes

exit codes: 0 done; 1 the definition (or an extension, or an existing project) was refused, every
reason printed; 2 bad usage; 3 the build or the machine failed (a tool or the disk: the message says
which).
`,
  init: `usage: appliance init [DIR]

Makes an appliance project in DIR (default: here; made if missing): appliance.yaml declaring one
extension, hello (a small static web server and its page, in hello/), the API secrets (secrets.yaml,
as \`cosictl gen secrets\` makes them) and the key that signs its upgrades (signing-key.pem), both
kept out of version control by its .gitignore, and a README saying what to do next. Refused, with
nothing written, where an appliance.yaml is already.
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
Images appear in out/ only once all are whole. Its upgrades are signed by signing.key, or else by a
development key made once in out/.build.

  --format NAMES   instead of the definition's formats: ${FORMATS.map((f) => f.name).join(', ')}, or all
`,
  run: `usage: appliance run [-f FILE] [--format raw|qcow2] [--memory MiB] [--fresh] [--no-build]

Builds the appliance (as \`appliance build\` does, nothing when nothing changed), then boots its disk
image in QEMU (UEFI, QEMU's default devices, TCG) with the console here. The machine writes to a disk of
its own, out/run/disk.qcow2, on top of the image: what it keeps lasts from one run to the next until the
image is built anew (or --fresh). Forwarded from this computer's 127.0.0.1: the API's port 50000 (a
free port when that one is taken; out/run/cosictl.yaml reaches it when the secrets file is
\`cosictl gen secrets\`'s) and each of run.forward. Ctrl-C powers the machine down (ACPI); twice, quits.

  --format F     the image to boot: raw or qcow2 (default: the definition's first of them)
  --memory MiB   instead of run.memory (default 512)
  --fresh        a new out/run/disk.qcow2: the machine as the image has it
  --no-build     boot what out/ holds as it is
`,
  push: `usage: appliance push [NAME...] [-f FILE] [--persist] [--config FILE] [--context NAME] [-e ADDR]

Builds the named extensions (default: every one) as \`appliance build\` does, and each whose image is
not the one the running machine runs is uploaded to it over the API (in chunks, resumed where the
machine stands after a lost call), signed with the appliance's signing key, and swapped in without a
reboot; then followed until the new process runs, and the times printed. The machine runs it as a
development override (\`cosictl get extensionstatus\` says so; \`cosictl delete extensionoverride NAME\`
goes back) until its next boot, or across boots and upgrades with --persist. Needs the admin role;
refused for an extension the machine's config does not declare, and for an unsigned image where an
ExtensionPolicy has requireSignature.

  --persist        keep the pushed build across reboots and upgrades
  --config FILE    the cosictl config with the machine's context (default: $COSICTL_CONFIG, then
                   out/run/cosictl.yaml as \`appliance run\` writes it, then cosictl's own)
  --context NAME   a context of that file other than its current one
  -e, --endpoint   the machine's HOST[:PORT], with the context's credentials
`,
};

export class UsageError extends Error {}

function argValue(argv: string[], ...names: string[]): string | undefined {
  const i = argv.findIndex((a) => names.includes(a));
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith('-')) throw new UsageError(`${argv[i]} needs a value`);
  return v;
}

async function loadOrExplain(file: string): Promise<ApplianceDefinition | undefined> {
  const r = await loadDefinition(file);
  if (r.definition) return r.definition;
  process.stderr.write(`appliance: ${file}: refused, ${r.problems.length} problem(s):\n`);
  for (const p of r.problems) process.stderr.write(`  ${p}\n`);
  return undefined;
}

function kernelSummary(d: ApplianceDefinition): string {
  const k = d.kernel;
  const parts = [
    k.fragment ? `its own, the system's config with ${relative(dirname(d.file), k.fragment)}` : 'the system\'s',
    ...k.args.length ? [`args ${k.args.join(' ')}`] : [],
    ...k.modules.length ? [`modules ${k.modules.join(', ')}`] : [],
  ];
  return parts.join('; ');
}

async function validate(argv: string[]): Promise<number> {
  const file = argValue(argv, '-f', '--file') ?? 'appliance.yaml';
  const d = await loadOrExplain(file);
  if (!d) return EXIT.refused;
  const configDocs = d.config.parts.reduce((n, p) => n + p.documents, 0);
  const secrets = d.secrets ? `, secrets from ${relative(dirname(d.file), d.secrets.file)}` : '';
  process.stdout.write(`${file}: ${d.name} ${d.version}: valid\n`
    + `  extensions: ${d.extensions.map((e) => `${e.name} (${Object.keys(e.source)[0]})`).join(', ') || 'none'}\n`
    + `  config: ${configDocs} document(s)${secrets}\n`
    + `  kernel: ${kernelSummary(d)}\n`
    + `  updates: ${d.updates ? `${d.updates.url} (channel ${d.updates.channel})` : 'pushed only (no updates:)'}\n`
    + `  formats: ${d.formats.join(', ')}\n`);
  return EXIT.ok;
}

/** The development key an appliance without signing: is signed with, kept in its out/.build. */
export const devSigningKeyFile = (outDir: string) => join(outDir, '.build', 'dev-signing-key.pem');

/** The key that signs the appliance's upgrades: signing.key, or the project's development key. */
function signingKeyFor(d: ApplianceDefinition, outDir: string): SigningKey {
  return d.signingKey ? loadSigningKey(d.signingKey) : developmentSigningKey(devSigningKeyFile(outDir));
}

/** Builds the definition's images in `names` into its out/, printing what was made; the build. */
async function buildImagesOf(d: ApplianceDefinition, names: readonly string[], host: ApplianceHost):
  Promise<ApplianceBuild> {
  const started = performance.now();
  const s = step('appliance');
  const kit = await openSystemKit(await host.systemKit((m) => s.info(m)));
  const outDir = join(dirname(d.file), 'out');
  if (!d.signingKey) s.info(`no signing.key: its upgrades are signed with ${relative(process.cwd(),
    devSigningKeyFile(outDir))} (machines built from it trust only that key)`);
  const r = await buildAppliance({
    definition: d, formats: names.map((n) => formatNamed(n)!), outDir, system: kit, kernelBuilder: buildDerivedKernel,
    signingKey: () => signingKeyFor(d, outDir), epoch: Number(process.env.SOURCE_DATE_EPOCH ?? 0),
    progress: (m) => s.info(m),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!r.built) process.stdout.write(`${d.name} ${d.version}: nothing changed since the last build (${seconds} s)\n`);
  else process.stdout.write(`${d.name} ${d.version}: built in ${seconds} s\n`);
  for (const a of r.artifacts) {
    process.stdout.write(`  ${relative(process.cwd(), join(outDir, a.file))}  ${(a.size / 1e6).toFixed(1)} MB  `
      + `sha256 ${a.sha256}\n`);
  }
  return r;
}

function formatsArg(argv: string[]): string[] | undefined {
  const formatArg = argValue(argv, '--format');
  const asked = formatArg === undefined ? undefined
    : formatArg.split(',').includes('all') ? FORMATS.map((f) => f.name) : formatArg.split(',').filter(Boolean);
  const unknown = (asked ?? []).filter((n) => !formatNamed(n));
  if (unknown.length) {
    throw new UsageError(`--format: unknown ${unknown.join(', ')}; one of ${FORMATS.map((f) => f.name).join(', ')}`);
  }
  return asked;
}

async function buildCommand(argv: string[], host: ApplianceHost): Promise<number> {
  const file = argValue(argv, '-f', '--file') ?? 'appliance.yaml';
  const asked = formatsArg(argv);
  const d = await loadOrExplain(file);
  if (!d) return EXIT.refused;
  await buildImagesOf(d, asked ?? d.formats, host);
  return EXIT.ok;
}

async function runCommand(argv: string[], host: ApplianceHost): Promise<number> {
  const file = argValue(argv, '-f', '--file') ?? 'appliance.yaml';
  const format = argValue(argv, '--format');
  if (format !== undefined && !(DISK_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format: "${format}": run boots a disk image, ${DISK_FORMATS.join(' or ')}`);
  }
  const memory = argValue(argv, '--memory');
  if (memory !== undefined && !(Number.isInteger(Number(memory)) && Number(memory) >= 128)) {
    throw new UsageError(`--memory: "${memory}": a whole number of MiB, at least 128`);
  }
  const d = await loadOrExplain(file);
  if (!d) return EXIT.refused;
  const disk = format ?? d.formats.find((f) => (DISK_FORMATS as readonly string[]).includes(f));
  if (!disk) {
    process.stderr.write(`appliance run: ${file}: formats ${d.formats.join(', ')} hold no disk image to boot; add `
      + `${DISK_FORMATS.join(' or ')}, or give --format\n`);
    return EXIT.refused;
  }
  const formats = d.formats.includes(disk) ? d.formats : [...d.formats, disk];
  if (!argv.includes('--no-build')) await buildImagesOf(d, formats, host);
  return runAppliance(d, {
    format: disk as (typeof DISK_FORMATS)[number], fresh: argv.includes('--fresh'),
    memoryMiB: memory === undefined ? d.run.memoryMiB : Number(memory), cosictl: host.cosictl,
  });
}

async function initCommand(argv: string[], host: ApplianceHost): Promise<number> {
  if (argv.length > 1) throw new UsageError(`one directory, not ${argv.length}`);
  const dir = argv[0] ?? '.';
  try {
    const made = await scaffoldProject(dir, {
      exampleProgram: await host.exampleProgram(), schemaFile: host.schemaFile, invocation: host.invocation,
      cosictl: host.cosictl,
    });
    process.stdout.write(`made the appliance project ${made.name} in ${dir}:\n`
      + made.files.map((f) => `  ${f}\n`).join('')
      + `next (${join(dir, 'README.md')} says more):\n`
      + made.next.map((c) => `  ${c}\n`).join(''));
    return EXIT.ok;
  } catch (e) {
    if (!(e instanceof ScaffoldRefused)) throw e;
    process.stderr.write(`appliance init: ${e.message}\n`);
    return EXIT.refused;
  }
}

async function pushCommand(argv: string[]): Promise<number> {
  const file = argValue(argv, '-f', '--file') ?? 'appliance.yaml';
  const valued = new Set(OPTIONS.push.values);
  const names = argv.filter((a, i) => !a.startsWith('-') && !valued.has(argv[i - 1] ?? ''));
  const configArg = argValue(argv, '--config');
  const context = argValue(argv, '--context');
  const endpoint = argValue(argv, '-e', '--endpoint');
  const d = await loadOrExplain(file);
  if (!d) return EXIT.refused;
  const outDir = join(dirname(d.file), 'out');
  const runConfig = join(outDir, 'run', 'cosictl.yaml');
  const configPath = configArg
    ?? (process.env.COSICTL_CONFIG === undefined && existsSync(runConfig) ? runConfig : undefined);
  const s = step('appliance');
  let ctx;
  try {
    ctx = loadContext({ ...(configPath ? { configPath } : {}), ...(context ? { context } : {}),
      ...(endpoint ? { endpoint } : {}), warn: (l) => s.info(l) });
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    process.stderr.write(`appliance push: ${e.message}\n`);
    return EXIT.usage;
  }
  try {
    const pushed = await pushExtensions({ definition: d, names, context: ctx, persist: argv.includes('--persist'),
      signingKey: () => signingKeyFor(d, outDir), progress: (m) => s.info(m) });
    if (!pushed.length) process.stdout.write('nothing to push: the machine runs every extension as built\n');
    for (const p of pushed) {
      const until = argv.includes('--persist') ? 'kept across boots' : 'until the machine\'s next boot';
      process.stdout.write(`${p.name}: ${p.status.version} (sha256 ${p.sha256.slice(0, 12)}, `
        + `${(p.bytes / 1e6).toFixed(1)} MB) running ${p.runningSeconds.toFixed(1)} s after the push began `
        + `(upload ${p.uploadSeconds.toFixed(1)} s), ${until}\n`);
    }
    return EXIT.ok;
  } catch (e) {
    if (!(e instanceof PushRefused)) throw e;
    process.stderr.write(`appliance push: ${e.message}\n`);
    return EXIT.refused;
  }
}

async function releaseCommand(argv: string[], host: ApplianceHost): Promise<number> {
  try {
    return await releaseMain(argv, {
      definition: loadOrExplain,
      signingKey: (d) => signingKeyFor(d, join(dirname(d.file), 'out')),
      buildBundle: async (d, build) => {
        const outDir = join(dirname(d.file), 'out');
        if (build) await buildImagesOf(d, d.formats.includes('upgrade') ? d.formats : [...d.formats, 'upgrade'], host);
        const file = join(outDir, UPGRADE_BUNDLE);
        if (!existsSync(file)) throw new Error(`${file}: no upgrade bundle (appliance build --format upgrade)`);
        return file;
      },
    });
  } catch (e) {
    process.stderr.write(`appliance release: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
}

export async function applianceMain(argv: string[], host: ApplianceHost): Promise<number> {
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
  if (command === 'release') return releaseCommand(rest, host);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(HELP[command]);
    return EXIT.ok;
  }
  try {
    const { values, flags } = OPTIONS[command];
    for (let i = 0; i < rest.length; i++) {
      if (values.includes(rest[i]!)) i++;
      else if ((command === 'init' || command === 'push') && !rest[i]!.startsWith('-')) continue;
      else if (!flags.includes(rest[i]!)) {
        const known = [...values, ...flags];
        const list = known.length ? ` (${known.join(', ')})` : '';
        throw new UsageError(`"${rest[i]}": not an option of ${command}${list}`);
      }
    }
    if (command === 'init') return await initCommand(rest, host);
    if (command === 'push') return await pushCommand(rest);
    if (command === 'validate') return await validate(rest);
    if (command === 'build') return await buildCommand(rest, host);
    return await runCommand(rest, host);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`appliance ${command}: ${e.message} (appliance ${command} --help)\n`);
      return EXIT.usage;
    }
    if (e instanceof ApplianceRefused) {
      process.stderr.write(`appliance: ${e.file}: refused, ${e.problems.length} problem(s):\n`
        + e.problems.map((p) => `  ${p}\n`).join(''));
      return EXIT.refused;
    }
    const refused = (e as Error).name === 'ExtensionRefused' || (e as Error).name === 'OciRefused';
    process.stderr.write(`appliance ${command}: ${(e as Error).message}\n`);
    return refused ? EXIT.refused : EXIT.failed;
  }
}
