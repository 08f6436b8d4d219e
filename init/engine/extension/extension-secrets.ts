// extension-secrets: what an extension gets that no one else may read (ExtensionSecret NAME, a sensitive type only
// admins read or write): variables added to its program's environment, and files its launcher binds read-only onto
// /run/secrets in its root. The files are written on the machine's /run (memory: never on a disk), in a directory
// of the extension's uid alone, each 0400, made afresh at every start and removed when it stops.
import { createHash } from 'node:crypto';
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_RE, RESERVED_ENV_RE } from '../../../machinery/model/extension-manifest.ts';
import type { ExtensionSecretSpec } from '../../../machinery/model/runtime-types.ts';

const FILE_NAME_RE = /^(?!\.\.?$)[A-Za-z0-9._-]{1,255}$/;
/** The files in all: secrets are keys and tokens, not data. */
export const SECRET_FILES_MAX = 1 << 20;
/** The variables in all: they travel in the launcher's environment, whose strings the kernel caps at 128 KiB. */
export const SECRET_ENV_MAX = 32 << 10;

/** What is wrong with a secret, each named by its key (never by its value). */
export function secretProblems(s: ExtensionSecretSpec): string[] {
  const problems: string[] = [];
  for (const k of Object.keys(s.env ?? {})) {
    if (!ENV_RE.test(k)) problems.push(`secret env.${k}: not a variable name`);
    else if (RESERVED_ENV_RE.test(k)) problems.push(`secret env.${k}: COSI_ and APPLIANCE_ variables are the engine's`);
  }
  const envBytes = Object.entries(s.env ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v) + 2, 0);
  if (envBytes > SECRET_ENV_MAX) problems.push(`secret env: ${envBytes} bytes, more than ${SECRET_ENV_MAX}`);
  for (const f of Object.keys(s.files ?? {})) {
    if (!FILE_NAME_RE.test(f)) problems.push(`secret files.${f}: a file's name is letters, digits, . _ and -`);
  }
  const fileBytes = Object.values(s.files ?? {}).reduce((n, v) => n + Buffer.byteLength(v), 0);
  if (fileBytes > SECRET_FILES_MAX) problems.push(`secret files: ${fileBytes} bytes, more than ${SECRET_FILES_MAX}`);
  return problems;
}

/** Which secret an extension started with: a change of it restarts the extension. */
export function secretKey(s: ExtensionSecretSpec | undefined): string {
  if (!s) return '';
  const sorted = (m: Record<string, string> = {}) => Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify([sorted(s.env), sorted(s.files)])).digest('hex');
}

/** Writes extension `name`'s secret files afresh under `root`, its uid's alone; the directory, or none. */
export function writeSecretFiles(root: string, name: string, uid: number, files: Record<string, string> = {}):
  string | undefined {
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  if (!Object.keys(files).length) return undefined;
  mkdirSync(root, { recursive: true, mode: 0o700 });
  mkdirSync(dir, { mode: 0o500 });
  for (const [f, content] of Object.entries(files)) {
    writeFileSync(join(dir, f), content, { mode: 0o400 });
    chownSync(join(dir, f), uid, uid);
  }
  chownSync(dir, uid, uid);
  return dir;
}

/** Removes extension `name`'s secret files. */
export const removeSecretFiles = (root: string, name: string) =>
  rmSync(join(root, name), { recursive: true, force: true });
