// grubenv: GRUB's environment block, the 1 KiB file its `load_env`/`save_env` read and
// write in place (no filesystem driver writes: GRUB overwrites the file's own sectors, so
// it must never change size). The boot loader counts tries of a new slot in it, and the
// running system marks a slot good by writing it: one format under BIOS and UEFI alike.
export const GRUBENV_SIZE = 1024;
const SIGNATURE = '# GRUB Environment Block\n';

export class GrubEnvError extends Error {}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// In a value, a backslash and a newline are written with a backslash before them.
const escape = (v: string) => v.replace(/[\\\n]/g, (c) => `\\${c}`);

/** The variables of an environment block, in order. */
export function decodeGrubEnv(block: Uint8Array): Map<string, string> {
  const text = Buffer.from(block).toString('latin1');
  if (block.length !== GRUBENV_SIZE) throw new GrubEnvError(`${block.length} bytes: an environment block is 1024`);
  if (!text.startsWith(SIGNATURE)) throw new GrubEnvError('no "# GRUB Environment Block" signature');
  const vars = new Map<string, string>();
  let i = SIGNATURE.length;
  while (i < text.length) {
    if (text[i] === '#') { // a comment line (grub-editenv writes one), or the padding to the end
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl + 1;
      continue;
    }
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new GrubEnvError(`byte ${i}: a line without "="`);
    const name = text.slice(i, eq);
    let value = '';
    let j = eq + 1;
    for (; j < text.length && text[j] !== '\n'; j++) value += text[j] === '\\' ? text[++j] : text[j];
    if (j >= text.length) throw new GrubEnvError(`variable "${name}" runs past the block`);
    vars.set(name, value);
    i = j + 1;
  }
  return vars;
}

/** An environment block holding `vars`, padded with "#" to 1024 bytes. */
export function encodeGrubEnv(vars: ReadonlyMap<string, string> | Record<string, string>): Buffer {
  const entries = vars instanceof Map ? [...vars] : Object.entries(vars);
  let text = SIGNATURE;
  for (const [name, value] of entries) {
    if (!NAME.test(name)) throw new GrubEnvError(`"${name}" is not a variable name`);
    if (!/^[\x20-\x7e\n\\]*$/.test(value)) throw new GrubEnvError(`${name}: only printable ASCII is kept`);
    text += `${name}=${escape(value)}\n`;
  }
  if (text.length > GRUBENV_SIZE) {
    throw new GrubEnvError(`${text.length} bytes of variables: more than the block's ${GRUBENV_SIZE}`);
  }
  return Buffer.from(text.padEnd(GRUBENV_SIZE, '#'), 'latin1');
}
