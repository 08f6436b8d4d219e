// edit: one resource in the user's editor, applied on save. The machine validates the edit as it
// validates apply's input; a refused edit goes back to the editor with the problems on top, and
// nothing typed is lost: when the editor leaves it as it was, the file is kept and named.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { loadDocuments } from '../../machinery/config/documents.ts';
import { isMap } from '../../machinery/config/safe-yaml.ts';
import { resourceName } from '../../cosi/meta/definition.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import type { Command } from '../command.ts';
import { typeThenIds } from '../completion/complete.ts';
import { CliError, EXIT, exitCodeOf } from '../errors.ts';
import { resourceDocument } from '../output/format.ts';
import { controllerOwnedWhy } from '../related-types.ts';
import type { Session } from '../session.ts';
import { reportApplied, sendConfig } from './apply.ts';

export const EDIT_HELP = `usage: cosictl edit TYPE ID

Opens the resource, as \`cosictl get TYPE ID -o yaml\` prints it, in an editor; when the
editor exits, the edit is applied as \`cosictl apply\` would (kept in the machine config).
Nothing is applied when the file is left as it was or emptied. When the machine refuses the
edit, the editor opens again with the problems at the top; leaving it unchanged then stops,
keeping the file and naming it. The read-only metadata (version, owner, phase, created,
updated, finalizers) is ignored; the type, id and namespace cannot be changed.
Resources a controller writes cannot be edited: edit the spec they come from.

The editor is $COSICTL_EDITOR, then $VISUAL, then $EDITOR, then vi; it may carry arguments
(e.g. "code --wait").

exit codes: 0 applied or nothing to apply, 1 refused or failed (the file is kept; e.g. the
resource changed on the machine while it was open, as checked when the editor exits),
3 the edit is invalid (the file is kept), 4 no such resource.
`;

const HEADER = `# Edit the resource below; it is applied when the editor exits. Lines starting with '#'
# are ignored; an empty file or one left as it was applies nothing.
`;

export const editorCommand = (env: NodeJS.ProcessEnv = process.env): string =>
  [env.COSICTL_EDITOR, env.VISUAL, env.EDITOR].find((e) => e?.trim()) ?? 'vi';

/**
 * Runs the editor on `file`; its arguments are split by the shell, as git and kubectl do. Not spawnSync:
 * the connection keeps answering its keepalive pings while a person edits.
 */
async function runEditor(editor: string, file: string): Promise<void> {
  const child = spawn('sh', ['-c', `${editor} "$1"`, 'sh', file], { stdio: 'inherit' });
  const [status, signal] = await new Promise<[number | null, string | null]>((resolve, reject) => {
    child.on('error', (e) => reject(new CliError(`cannot run the editor "${editor}": ${e.message}`, EXIT.failed)));
    child.on('exit', (code, sig) => resolve([code, sig]));
  });
  if (status !== 0) {
    throw new CliError(`the editor "${editor}" exited with ${signal ?? `status ${status}`}; nothing applied`,
      EXIT.failed);
  }
}

/** The file without the comment block this command puts at its top (the user's own comments stay). */
const withoutHeader = (text: string) => {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => !/^#/.test(l));
  return first < 0 ? '' : lines.slice(first).join('\n');
};

/** What the edit says: its documents as data (comments and layout do not count), or '' when there are none. */
function meaning(text: string): string {
  const docs = YAML.parseAllDocuments(text);
  if (!Array.isArray(docs)) return '';
  // A document that does not parse means what it says: its text (the machine will say what is wrong).
  const values = docs.map((d) => (d.errors.length ? d.toString() : d.toJS() as unknown))
    .filter((v) => v !== null && v !== undefined);
  return values.length ? JSON.stringify(values) : '';
}

const commented = (problems: string) => problems.trimEnd().split('\n').map((l) => `# ${l}`).join('\n');

interface Target { namespace: string; type: string; id: string }

/** Why the edited text is not an edit of `want` (one document naming the same resource), or undefined. */
async function notTheSame(s: Session, text: string, want: Target): Promise<string | undefined> {
  const loaded = loadDocuments(text, Infinity, Infinity);
  if ('problem' in loaded) return loaded.problem.message;
  if (loaded.docs.length !== 1) return `the file holds ${loaded.docs.length} documents; edit changes one resource`;
  const doc = loaded.docs[0]!;
  if ('why' in doc) return doc.why;
  const md = isMap(doc.value) && isMap(doc.value.metadata) ? doc.value.metadata : undefined;
  if (!md) return 'the document has no metadata';
  let type: unknown = md.type;
  if (typeof md.type === 'string') {
    try {
      type = (await s.resolve(md.type)).type;
    } catch (e) {
      return `metadata.type: ${(e as Error).message}`;
    }
  }
  const namespace = md.namespace === undefined ? want.namespace : md.namespace;
  for (const [what, got, was] of [['type', type, want.type], ['id', md.id, want.id],
    ['namespace', namespace, want.namespace]] as const) {
    if (got !== was) {
      return `metadata.${what} was ${JSON.stringify(was)}, the edit makes it ${JSON.stringify(got ?? null)}: `
        + 'edit changes a resource in place (to make another, use cosictl apply)';
    }
  }
  return undefined;
}

async function edit(
  s: Session, args: string[], out: (t: string) => void, err: (t: string) => void,
): Promise<number> {
  const [typeName, id, ...extra] = args;
  if (!typeName || !id || extra.length) throw new CliError('edit: give one TYPE and one ID', EXIT.usage);
  const def = await s.resolve(typeName);
  const ptr = { namespace: s.namespaceFor(def), type: def.type, id };
  const name = resourceName(ptr, def);
  const before = await s.getNamed(def, id, `edit ${name}`);
  if (before.metadata.owner) {
    throw new CliError(controllerOwnedWhy('edit', name, before.metadata.owner, def, await s.definitions()),
      EXIT.failed);
  }
  const original = YAML.stringify(resourceDocument(before));
  const dir = mkdtempSync(join(tmpdir(), 'cosictl-edit-'));
  const file = join(dir, `${def.displayType.toLowerCase()}-${id.replace(/[^\w.-]/g, '_')}.yaml`);
  writeFileSync(file, HEADER + original, { mode: 0o600 });
  try {
    const code = await editLoop({ s, ptr, name, before, original, file, out, err });
    if (code === EXIT.ok) rmSync(dir, { recursive: true, force: true });
    return code;
  } catch (e) {
    // Whatever went wrong (the editor, the machine), what the person typed is still there.
    throw new CliError(`${(e as Error).message} (the edit is kept in ${file})`, exitCodeOf(e));
  }
}

async function editLoop(o: {
  s: Session; ptr: Target; name: string; before: Resource; original: string; file: string;
  out: (t: string) => void; err: (t: string) => void;
}): Promise<number> {
  const { s, ptr, name, before, original, file, out, err } = o;
  const editor = editorCommand();
  let last = meaning(original);
  for (;;) {
    await runEditor(editor, file);
    const text = readFileSync(file, 'utf8');
    const now = meaning(text);
    if (!now) {
      err('edit cancelled: the file was emptied; nothing applied\n');
      return EXIT.ok;
    }
    if (now === meaning(original)) {
      err('edit cancelled: no changes; nothing applied\n');
      return EXIT.ok;
    }
    if (now === last) {
      err(`the edit was refused and left as it was; nothing applied. It is kept in ${file}\n`);
      return EXIT.invalid;
    }
    last = now;
    let refused = await notTheSame(s, text, ptr);
    if (!refused) {
      const current = await s.state.get(ptr);
      if (current.metadata.version !== before.metadata.version) {
        err(`edit ${name}: it changed on the machine while it was being edited (version ${before.metadata.version} `
          + `-> ${current.metadata.version}); nothing applied. The edit is kept in ${file}: run cosictl edit again\n`);
        return EXIT.failed;
      }
      const res = await sendConfig(s, { bytes: Buffer.from(text), name: `edit of ${name}`, files: [] },
        { mode: 'merge', dryRun: false, trySeconds: 0 });
      if ('applied' in res) {
        reportApplied(res.applied, { dryRun: false }, out, err);
        return EXIT.ok;
      }
      refused = res.refused;
    }
    err(`${refused}\n`);
    writeFileSync(file, `${HEADER}# The machine refused this edit:\n${commented(refused)}\n#\n${withoutHeader(text)}`);
  }
}

export const editCommand: Command = {
  name: 'edit',
  summary: 'edit TYPE ID           open a resource in $EDITOR and apply it on save',
  help: EDIT_HELP,
  flags: [],
  completeArg: typeThenIds(1),
  run: async ({ p, out, err, session }) => edit(await session(), p.positional, out, err),
};
