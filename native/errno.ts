// errno: the one way to ask which errno an error carries. The native addon's errors
// and Node's own (fs, net) both name it in `code` (ENOENT, EEXIST, ...).

/** The errno name of an error (ENOENT, EEXIST, ...), or undefined when it carries none. */
export function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** True when `e` carries one of these errno names. */
export function isErrno(e: unknown, ...codes: string[]): boolean {
  const c = errnoOf(e);
  return c !== undefined && codes.includes(c);
}
