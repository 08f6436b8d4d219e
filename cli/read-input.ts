// read-input: what the -f arguments name, as inputs: a file, - for stdin, a directory (its
// .yaml, .yml and .json files, recursively, in name order, as kubectl does) or an http(s)
// URL. Unreadable input is a usage error naming it; input that is not a config's (not
// decodable, or holding no document) is invalid, refused before anything is sent.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeConfigInput } from '../machinery/config/config-input.ts';
import { CliError, EXIT } from './errors.ts';

export interface Input { name: string; bytes: Buffer }
/** An input as text: gzip undone, size and nesting checked, not empty. */
export interface InputText extends Input { text: string }

/** A URL's body is at most this (a machine config's own limit is lower). */
const MAX_URL_BYTES = 16 << 20;
const URL_TIMEOUT_MS = 30_000;

export function readInput(path: string): Buffer {
  try {
    return path === '-' ? readFileSync(0) : readFileSync(path);
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`, EXIT.usage);
  }
}

function filesIn(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new CliError(`cannot read ${dir}: ${(e as Error).message}`, EXIT.usage);
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesIn(path);
    return e.isFile() && /\.(ya?ml|json)$/i.test(e.name) ? [path] : [];
  });
}

async function fetchInput(url: string): Promise<Input> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(URL_TIMEOUT_MS), redirect: 'follow' });
  } catch (e) {
    const why = (e as Error).name === 'TimeoutError' ? `no answer within ${URL_TIMEOUT_MS / 1000} s`
      : `${(e as Error).message}${(e as { cause?: Error }).cause ? ` (${(e as { cause: Error }).cause.message})` : ''}`;
    throw new CliError(`cannot fetch ${url}: ${why}`, EXIT.usage);
  }
  if (!res.ok) throw new CliError(`cannot fetch ${url}: HTTP ${res.status} ${res.statusText}`, EXIT.usage);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length > MAX_URL_BYTES) {
    throw new CliError(`${url}: ${bytes.length} bytes, more than the ${MAX_URL_BYTES >> 20} MiB taken`, EXIT.usage);
  }
  return { name: url, bytes };
}

/**
 * Every input the -f arguments name, in order; a directory gives its files. Refused: none given,
 * and a directory with no YAML or JSON file.
 */
export async function readInputs(args: readonly string[], command: string): Promise<Input[]> {
  if (!args.length) throw new CliError(`${command}: give -f FILE (a file, a directory, a URL, or - for stdin)`,
    EXIT.usage);
  const inputs: Input[] = [];
  for (const a of args) {
    if (/^https?:\/\//i.test(a)) {
      inputs.push(await fetchInput(a));
      continue;
    }
    if (a !== '-' && statSync(a, { throwIfNoEntry: false })?.isDirectory()) {
      const files = filesIn(a);
      if (!files.length) throw new CliError(`${a}: a directory with no .yaml, .yml or .json file`, EXIT.usage);
      inputs.push(...files.map((f) => ({ name: f, bytes: readInput(f) })));
      continue;
    }
    inputs.push({ name: a === '-' ? 'stdin' : a, bytes: readInput(a) });
  }
  return inputs;
}

/** Whether a text holds anything but blanks, comments and document markers. */
const isEmptyText = (text: string) => !/[^\s]/.test(text.replace(/#.*$/gm, '').replace(/^(---|\.\.\.)\s*$/gm, ''));

/**
 * readInputs, each as the text of a config (what apply, diff and delete read). One that does not
 * decode (gzip, size, nesting) or holds no document is refused (exit 3); `nothing` says what was
 * therefore not done ("nothing applied").
 */
export async function readTexts(args: readonly string[], command: string, nothing: string): Promise<InputText[]> {
  return (await readInputs(args, command)).map((i) => {
    const d = decodeConfigInput(i.bytes);
    if (!d.ok) throw new CliError(`${i.name}: ${d.message}; ${nothing}`, EXIT.invalid);
    if (isEmptyText(d.text)) throw new CliError(`${i.name}: no documents in it; ${nothing}`, EXIT.invalid);
    return { ...i, text: d.text };
  });
}
