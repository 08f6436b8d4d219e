// extension-uids: the uid each extension runs as, one per name and the same for good: kept on STATE
// (extension-uids.json) when the machine has one, so that after a reboot, an upgrade or a new order of declaration
// an extension is the same uid, and what it wrote stays its own. A uid, once given, is not given to another name.
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { EXTENSION_NAME_RE } from '../../../machinery/model/extension-manifest.ts';
import { writeFileAtomic } from '../../../machinery/sys/atomic-write.ts';

/** Extensions run as uids from here up, one each, never a machine's process's (those are 0). */
export const EXTENSION_UID_BASE = 61_000;
/** How many there can be: the range stays below 65534 (nobody). */
export const EXTENSION_UID_COUNT = 4_000;

/** The file's name on STATE. */
export const EXTENSION_UIDS_FILE = 'extension-uids.json';
const DAMAGED_SUFFIX = '.damaged';

export interface ExtensionUids {
  /** The uid of extension `name`: the one it had, or the lowest never given (written down before it is returned). */
  uidOf(name: string): number;
  /** Where they are kept; undefined: memory only, given again in order of appearance at the next boot. */
  readonly file: string | undefined;
}

/** The book in `text`, or the reason it is not one. */
export function parseExtensionUids(text: string): Map<string, number> | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return `not JSON: ${(e as Error).message}`;
  }
  const uids = (doc as { uids?: unknown } | null)?.uids;
  if (typeof uids !== 'object' || uids === null || Array.isArray(uids)) return 'no "uids" object';
  const book = new Map<string, number>();
  const taken = new Set<number>();
  for (const [name, uid] of Object.entries(uids)) {
    if (!EXTENSION_NAME_RE.test(name)) return `"${name}" is not an extension's name`;
    if (!Number.isInteger(uid) || uid < EXTENSION_UID_BASE || uid >= EXTENSION_UID_BASE + EXTENSION_UID_COUNT) {
      return `${name}: ${JSON.stringify(uid)} is not an extension uid (${EXTENSION_UID_BASE} to `
        + `${EXTENSION_UID_BASE + EXTENSION_UID_COUNT - 1})`;
    }
    if (taken.has(uid as number)) return `${name}: uid ${uid} is another extension's`;
    taken.add(uid as number);
    book.set(name, uid as number);
  }
  return book;
}

const format = (book: ReadonlyMap<string, number>) =>
  JSON.stringify({ uids: Object.fromEntries([...book].sort((a, b) => a[1] - b[1])) }, null, 2) + '\n';

/**
 * The uid book kept in `file` (undefined: memory only). A file that is not a book is kept aside as `.damaged`,
 * said through `warn`, and a new book begun: the uids it held may then go to other names, which the warning says.
 */
export function extensionUids(file: string | undefined, warn: (message: string) => void): ExtensionUids {
  const book = new Map<string, number>();
  if (file && existsSync(file)) {
    const read = parseExtensionUids(readFileSync(file, 'utf8'));
    if (typeof read === 'string') {
      renameSync(file, file + DAMAGED_SUFFIX);
      warn(`${file}: ${read}; kept as ${file}${DAMAGED_SUFFIX}, extensions get uids anew (files an extension owns `
        + 'may now be another\'s)');
    } else {
      for (const [name, uid] of read) book.set(name, uid);
    }
  }
  return {
    file,
    uidOf(name) {
      const known = book.get(name);
      if (known !== undefined) return known;
      const taken = new Set(book.values());
      let uid = EXTENSION_UID_BASE;
      while (taken.has(uid)) uid++;
      if (uid >= EXTENSION_UID_BASE + EXTENSION_UID_COUNT) {
        throw new Error(`no extension uid left for ${name}: ${EXTENSION_UID_COUNT} are given`);
      }
      const next = new Map(book).set(name, uid);
      if (file) writeFileAtomic(file, format(next), 0o600); // throws with the errno: the extension fails with it
      book.set(name, uid);
      return uid;
    },
  };
}
