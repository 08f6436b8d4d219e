// image: `npm run image -- --format raw,qcow2|all [--size MiB]`: builds the system (npm run build), then this
// repository's own appliance (image/appliance.yaml: the system, nothing added) in the chosen disk and cloud formats
// into out/images, with a manifest: the same code as `appliance build`.
import { join } from 'node:path';
import { buildAppliance } from '../image/appliance/build-appliance.ts';
import { loadDefinition } from '../image/appliance/definition.ts';
import { openSystemKit } from '../image/appliance/system-kit.ts';
import { buildDerivedKernel } from './kernel.ts';
import { FORMATS, formatNamed } from '../image/formats/index.ts';
import { repoHost } from './appliance.ts';
import { signingKeyOf } from './build.ts';
import { OUT, ROOT } from './lib/paths.ts';
import { step } from './lib/log.ts';

/** This repository's own appliance: the system as it is. */
export const OWN_DEFINITION = join(ROOT, 'image', 'appliance.yaml');

const HELP = `usage: npm run image -- --format <name>[,<name>...] | --format all [--size MiB] [--seed S]
                      [--cmdline TEXT | --append TEXT] [--signing-key FILE]

Builds the system if needed (npm run build), then this repository's own appliance
(image/appliance.yaml) in each format into out/images, listing every artifact (format, size,
sha256) in out/images/manifest.json. The same inputs and seed give the same bytes; with nothing
changed, nothing is done.

Formats:
${FORMATS.map((f) => `  ${f.name}\n      ${f.summary}`).join('\n')}

  --size MiB  the raw disk's size (default: what it needs, rounded up to 64 MiB); the
              EPHEMERAL partition takes the rest, and grows to a larger disk at first boot
  --seed S    seeds the disk's GUIDs and volume ids (default: the version and commit)
  --cmdline TEXT  the kernel command line every image boots with, instead of the system's
                  (e.g. "console=ttyS0 appliance.platform=metal appliance.config=https://...")
  --append TEXT   words added to it (e.g. "appliance.config=http://10.0.0.1/machine.yaml")
  --signing-key FILE  the Ed25519 private key (PKCS#8 PEM) that signs the upgrade bundle; default:
                  a development key made once in out/dev/upgrade-signing-key.pem
`;

export interface ImageArgs {
  formats: string[]; sizeMiB?: number; seed?: string; cmdline?: string; append?: string; signingKey?: string;
}

export function parseImageArgs(argv: readonly string[]): ImageArgs {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
    return v;
  };
  const known = FORMATS.map((f) => f.name).join(', ');
  const names = (value('--format') ?? '').split(',').filter(Boolean);
  if (!names.length) throw new Error(`--format is required: one or more of ${known}, or all`);
  const formats = names.includes('all') ? FORMATS.map((f) => f.name) : names;
  const unknown = formats.filter((n) => !formatNamed(n));
  if (unknown.length) {
    throw new Error(`unknown format ${unknown.map((n) => `"${n}"`).join(', ')}: one of ${known}`);
  }
  const size = value('--size');
  if (size !== undefined && !(Number.isInteger(Number(size)) && Number(size) > 0)) {
    throw new Error(`--size "${size}": a whole number of MiB`);
  }
  const seed = value('--seed');
  const cmdline = value('--cmdline');
  const append = value('--append');
  const signingKey = value('--signing-key');
  if (cmdline !== undefined && append !== undefined) {
    throw new Error('--cmdline replaces the command line and --append adds to it: give one');
  }
  for (const [flag, v] of [['--cmdline', cmdline], ['--append', append]] as const) {
    // One line: GRUB's config and the iPXE script take the words as they are.
    if (v !== undefined && /[\n\r]/.test(v)) throw new Error(`${flag}: the command line is one line`);
  }
  return {
    formats, ...(size ? { sizeMiB: Number(size) } : {}), ...(seed ? { seed } : {}),
    ...(cmdline !== undefined ? { cmdline } : {}), ...(append !== undefined ? { append } : {}),
    ...(signingKey !== undefined ? { signingKey } : {}),
  };
}

/** The command line the images boot with: the build's, replaced or added to by the arguments. */
export function imageCmdline(built: string, args: Pick<ImageArgs, 'cmdline' | 'append'>): string {
  return (args.cmdline ?? [built.trim(), args.append ?? ''].filter(Boolean).join(' ')).trim();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--help')) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  let args: ImageArgs;
  try {
    args = parseImageArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`image: ${(e as Error).message}\n(npm run image -- --help)\n`);
    process.exit(2);
  }
  const own = await loadDefinition(OWN_DEFINITION);
  if (!own.definition) {
    process.stderr.write(`image: ${OWN_DEFINITION}: refused:\n${own.problems.map((p) => `  ${p}\n`).join('')}`);
    process.exit(1);
  }
  // This repository's image is its own appliance, built as any other (image/appliance/build-appliance.ts).
  const kit = await openSystemKit(await repoHost.systemKit(() => undefined));
  const s = step('image');
  const r = await buildAppliance({
    definition: own.definition, formats: args.formats.map((n) => formatNamed(n)!), system: kit,
    kernelBuilder: buildDerivedKernel, signingKey: () => signingKeyOf(args.signingKey), outDir: join(OUT, 'images'),
    seed: args.seed ?? `${kit.version}+${kit.commit}`, epoch: Number(process.env.SOURCE_DATE_EPOCH ?? 0),
    progress: (m) => s.info(m), cmdline: imageCmdline(kit.cmdline, args),
    ...(args.sizeMiB ? { sizeMiB: args.sizeMiB } : {}),
  });
  s.done(`${r.built ? '' : 'nothing changed: '}${r.artifacts.map((a) => `${a.file} ${a.sha256.slice(0, 12)}`)
    .join(', ')}`);
}
