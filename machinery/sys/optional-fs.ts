// optional-fs: reading what may not be there (a sysfs attribute a device lacks, an index file
// an image may not ship, a class directory a kernel without that subsystem has none of) as
// "absent", and every other failure as the error it is.
import { readdirSync, readFileSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';

/**
 * A file's text, or undefined when it does not exist (ENOENT) or fails with one of `absent` (a sysfs
 * attribute a device cannot tell answers ENODEV or EINVAL).
 */
export function readOptional(path: string, ...absent: string[]): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if (isErrno(e, 'ENOENT', ...absent)) return undefined;
    throw e;
  }
}

/** A directory's entries, in the order the kernel lists them; none when it does not exist. */
export function listDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return [];
    throw e;
  }
}
