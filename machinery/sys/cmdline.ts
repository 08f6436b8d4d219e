// cmdline: parses the kernel command line (/proc/cmdline) the way the kernel does:
// space-separated, double quotes group, `key=value` or a bare flag (value "").
export type Cmdline = Map<string, string>;

export function parseCmdline(text: string): Cmdline {
  const out: Cmdline = new Map();
  let i = 0;
  const s = text.trim();
  while (i < s.length) {
    while (s[i] === ' ' || s[i] === '\n' || s[i] === '\t') i++;
    if (i >= s.length) break;
    let token = '';
    let quoted = false;
    for (; i < s.length; i++) {
      const c = s[i]!;
      if (c === '"') {
        quoted = !quoted;
        continue;
      }
      if (!quoted && (c === ' ' || c === '\n' || c === '\t')) break;
      token += c;
    }
    const eq = token.indexOf('=');
    if (eq < 0) out.set(token, '');
    else out.set(token.slice(0, eq), token.slice(eq + 1)); // last one wins, as for the kernel's own params
  }
  return out;
}

/** A boolean switch: present as a bare flag, or =1/=true/=yes/=on. */
export function cmdlineFlag(c: Cmdline, key: string): boolean {
  const v = c.get(key);
  return v !== undefined && ['', '1', 'true', 'yes', 'on'].includes(v.toLowerCase());
}
