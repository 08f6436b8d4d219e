// errno: the one way to ask which errno an error carries, by the kernel's own names (native/gen/errno-table.ts).
// Errors name it four ways: the addon's and Node's by name in `code` (ENOENT), Node's for an errno libuv has
// no name for as `code` "Unknown system error -123" (ENOMEDIUM from an empty CD-ROM), Node's SystemError (`os`
// calls) as `code` ERR_SYSTEM_ERROR with the name in `info.code`, and netlink's and others by number alone.
// Aliases resolve to one name: libuv's ENOTSUP is the kernel's EOPNOTSUPP.
import { ERRNO_BY_NAME, ERRNO_BY_NUMBER } from './gen/errno-table.ts';

/** The kernel's name of errno `n` (sign ignored), or `E<n>` for a number it has none for. */
export function errnoName(n: number): string {
  const abs = Math.abs(n);
  return ERRNO_BY_NUMBER.get(abs)?.name ?? `E${abs}`;
}

/** The number of an errno name, aliases included (EWOULDBLOCK is 11), or undefined for a name that is none. */
export const errnoNumber = (name: string): number | undefined => ERRNO_BY_NAME.get(name);

/** The kernel's words for errno `n` ("No medium found"), or undefined. */
export const errnoText = (n: number): string | undefined => ERRNO_BY_NUMBER.get(Math.abs(n))?.text;

const UNKNOWN_SYSTEM_ERROR = /^Unknown system error (-?\d+)$/;

/** The errno number an error carries, or undefined when it carries none. */
export function errnoNumberOf(e: unknown): number | undefined {
  if (e === null || typeof e !== 'object') return undefined;
  const { code, errno, info } = e as { code?: unknown; errno?: unknown; info?: { code?: unknown } };
  if (code === 'ERR_SYSTEM_ERROR' && typeof info?.code === 'string') return errnoNumberOf({ code: info.code });
  if (typeof code === 'string') {
    const named = ERRNO_BY_NAME.get(code);
    if (named !== undefined) return named;
    const unknown = UNKNOWN_SYSTEM_ERROR.exec(code);
    // Any other code (zlib's Z_DATA_ERROR with errno -3, libuv's EOF or EAI_AGAIN) is not an errno.
    return unknown ? Math.abs(Number(unknown[1])) : undefined;
  }
  return typeof errno === 'number' && Number.isInteger(errno) && errno !== 0 ? Math.abs(errno) : undefined;
}

/** The errno name of an error (ENOENT, ENOMEDIUM, ...), or undefined when it carries none. */
export function errnoOf(e: unknown): string | undefined {
  const n = errnoNumberOf(e);
  return n === undefined ? undefined : errnoName(n);
}

/** True when `e` carries one of these errno names (aliases match: EWOULDBLOCK is EAGAIN). */
export function isErrno(e: unknown, ...codes: string[]): boolean {
  const n = errnoNumberOf(e);
  return n !== undefined && codes.some((c) => errnoNumber(c) === n);
}
