// apply, apply-config: send documents to the machine config service. `apply` merges
// them into the machine config (creates and updates), `apply-config` replaces the
// whole config (and deletes the user resources it does not name). The machine
// validates the whole input first: on any problem nothing is written and every
// problem is printed with its document number and field (exit 3).
import { formatProblem, loadDocuments } from '../../machinery/config/documents.ts';
import { ConfigRefused } from '../../machinery/config/validate-config.ts';
import type { InputFile } from '../../proto/gen/spec-types.ts';
import { CONFIG_RPC, callUnary } from '../../machinery/model/service-wire.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { flag, flagAll, has, type Parsed } from '../args.ts';
import { CliError, EXIT } from '../errors.ts';
import { parseDuration } from '../duration.ts';
import { readTexts, type InputText } from '../read-input.ts';
import type { Session } from '../session.ts';
import { missingLinkWarnings } from '../link-check.ts';

const DOCUMENT = `  metadata:
    type: Motd            # type name or alias
    id: hello
    namespace: config     # optional (the type's default)
    labels: {team: a}     # optional
  spec:
    text: Hello`;

const COMMON = `  -f, --filename FILE   multi-document YAML, plain or gzip: a file, a directory (its .yaml,
                        .yml and .json files, recursively, in name order), an http(s) URL,
                        or - for stdin; repeatable
      --dry-run         validate and show what would change; change nothing
      --try DURATION    apply without persisting (e.g. 60s, 5m); unless
                        \`cosictl apply-config --confirm\` comes in time, the
                        previous config comes back exactly

The machine validates the whole input first (types, namespaces, ids, specs, and
the types and namespaces the input defines itself): on any problem each one is
printed with its document number and field, nothing is written, and the exit
code is 3. Changes that take effect only at the next boot are listed as such.
What \`cosictl get -o yaml\` prints applies back: the read-only metadata in it
(version, owner, phase, created, updated, finalizers) is ignored.`;

export const APPLY_HELP = `usage: cosictl apply -f FILE [-f FILE...] [--dry-run] [--try DURATION]

Creates or updates the resources in FILE and keeps them in the machine config
(persisted on the STATE filesystem when the machine has one):

${DOCUMENT}

${COMMON}
`;

export const APPLY_CONFIG_HELP = `usage: cosictl apply-config -f FILE [--dry-run] [--try DURATION]
       cosictl apply-config --confirm

Replaces the machine config with FILE: resources in it are created or updated,
resources users declared before that FILE does not name are deleted. What
controllers, DHCP or the platform produce is never touched.

${COMMON}
  --confirm             keep the config being tried
`;

/**
 * One input for the machine: a single file as it is (the machine undoes gzip), several joined as
 * documents. Each is checked here too (size, gzip, nesting, emptiness): no point sending what the
 * machine refuses unread.
 */
export async function configInput(
  args: string[], command: string,
): Promise<{ bytes: Uint8Array; name: string; files: InputFile[]; inputs: InputText[] }> {
  const inputs = await readTexts(args, command, 'nothing applied');
  const texts = inputs.map((i) => (i.text.endsWith('\n') ? i.text : `${i.text}\n`));
  const name = inputs.map((i) => i.name).join(', ');
  if (inputs.length === 1) return { bytes: inputs[0]!.bytes, name, files: [], inputs };
  // The machine counts documents as loadDocuments does, so the counts here are its own. YAML that does
  // not parse is reported here, where its lines are counted in its own file, not in the joined whole.
  const broken: string[] = [];
  const files = inputs.map((i, n) => {
    const loaded = loadDocuments(texts[n]!, Infinity, Infinity);
    if ('problem' in loaded) {
      broken.push(formatProblem(loaded.problem, i.name));
      return { name: i.name, documents: 0 };
    }
    for (const d of loaded.docs) if ('why' in d) broken.push(formatProblem({ ...d, what: '', message: d.why }, i.name));
    return { name: i.name, documents: loaded.docs.length };
  });
  if (broken.length) throw new ConfigRefused(broken, name);
  return { bytes: Buffer.from(texts.map((t) => `---\n${t}`).join('')), name, files, inputs };
}

const VERB: Record<string, string> = {
  created: 'created', updated: 'configured', unchanged: 'unchanged', deleted: 'deleted',
};

export async function applyConfig(
  s: Session, p: Parsed, mode: 'merge' | 'replace', out: (text: string) => void, err: (text: string) => void,
): Promise<number> {
  const command = mode === 'merge' ? 'apply' : 'apply-config';
  if (has(p, 'confirm')) {
    if (mode === 'merge' || flagAll(p, 'filename').length || has(p, 'try') || has(p, 'dry-run')) {
      throw new CliError('--confirm goes alone: cosictl apply-config --confirm', EXIT.usage);
    }
    const r = await callUnary(s.state, CONFIG_RPC.confirmConfig, {});
    out(`tried config confirmed; ${r.persistedTo ? `persisted to ${r.persistedTo}` : `held in memory only: `
      + r.persistProblem}\n`);
    return EXIT.ok;
  }
  const files = flagAll(p, 'filename');
  if (p.positional.length) {
    throw new CliError(`${command} takes its documents from -f, not arguments ("${p.positional[0]}")`, EXIT.usage);
  }
  const dryRun = has(p, 'dry-run');
  const tryFor = flag(p, 'try');
  const trySeconds = tryFor === undefined ? 0 : parseDuration('try', tryFor);
  if (dryRun && trySeconds) throw new CliError('--dry-run and --try do not go together', EXIT.usage);
  const res = await sendConfig(s, configInput(files, command), { mode, dryRun, trySeconds });
  if ('refused' in res) {
    err(`${res.refused}\n`);
    return EXIT.invalid;
  }
  reportApplied(res.applied, { dryRun }, out, err);
  for (const w of await missingLinkWarnings(s, res.sent.inputs)) err(`warning: ${w}\n`);
  return EXIT.ok;
}

type Sent = Pick<Awaited<ReturnType<typeof configInput>>, 'bytes' | 'name' | 'files'>;
export type Applied = ReturnType<typeof CONFIG_RPC.applyConfig.response.decode>;

/**
 * Sends documents to the machine config service. Input refused (by configInput's checks here, or by
 * the machine) answers `refused`: every problem, named by file and document; nothing was written.
 */
export async function sendConfig<T extends Sent>(
  s: Session, input: T | Promise<T>, how: { mode: 'merge' | 'replace'; dryRun: boolean; trySeconds: number },
): Promise<{ applied: Applied; sent: T } | { refused: string }> {
  try {
    const sent = await input;
    return { sent, applied: await callUnary(s.state, CONFIG_RPC.applyConfig, {
      config: sent.bytes, ...how, sourceName: sent.name, files: sent.files,
    }, s.longCallMs) };
  } catch (e) {
    if (e instanceof StateError && e.code === 'invalid-argument') return { refused: e.message };
    throw e;
  }
}

/** What changed, one line per resource as kubectl says it, and where the config was kept. */
export function reportApplied(
  res: Applied, { dryRun }: { dryRun: boolean }, out: (text: string) => void, err: (text: string) => void,
): void {
  for (const c of res.changes ?? []) {
    out(`${c.resource} ${VERB[c.action] ?? c.action}${dryRun ? ' (dry run)' : ''}${c.needsReboot
      ? ' (takes effect at the next boot)' : ''}\n`);
  }
  for (const i of res.ignored ?? []) err(`ignored: ${i}\n`);
  if (dryRun) out('dry run: nothing changed\n');
  else if (res.tryUntil) {
    out(`trying until ${res.tryUntil}: \`cosictl apply-config --confirm\` keeps it, otherwise it is reverted\n`);
  } else if (res.persistedTo) out(`persisted to ${res.persistedTo}\n`);
  // A fact of the machine (no STATE: a live or dev boot), not a fault: a failed save is the machine's error log's.
  else err(`not persisted (${res.persistProblem}): held in memory, a reboot loses it\n`);
  if (res.needsReboot?.length) err(`${res.needsReboot.length} change(s) take effect at the next boot\n`);
}
