// modalias: which shipped modules drive a device. Every device the kernel knows has a
// modalias (/sys/bus/<bus>/devices/<dev>/modalias, or MODALIAS= in its uevent), e.g.
// pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00, and every module lists the patterns
// it drives (`alias=` in .modinfo, collected into modules.alias at image time). A pattern is
// a shell glob (* ? [...]), matched as kmod's modprobe does (fnmatch without flags).

export interface ModuleAlias { pattern: string; module: string }

export class ModuleAliasError extends Error {
  constructor(message: string, readonly line: number) { super(`modules.alias line ${line}: ${message}`); }
}

/** `alias <pattern> <module>` lines; blank lines and # comments are skipped. */
export function parseModulesAlias(text: string): ModuleAlias[] {
  const out: ModuleAlias[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const words = line.split(/\s+/);
    if (words[0] !== 'alias' || words.length !== 3) {
      throw new ModuleAliasError(`"${line}": expected "alias <pattern> <module>"`, i + 1);
    }
    out.push({ pattern: words[1]!, module: words[2]! });
  });
  return out;
}

/** A glob as a RegExp: * any run, ? one character, [...] a class ([!...] negated); the rest literal. */
export function globRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2); // a ] right after [ (or [!) is part of the class
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** The text of a glob before its first special character: every match starts with it. */
export function literalPrefix(pattern: string): string {
  const i = pattern.search(/[*?[]/);
  return i < 0 ? pattern : pattern.slice(0, i);
}

/**
 * The patterns, for lookups for each device of a boot and each hotplugged one. A device's modalias is
 * compared with each pattern's literal prefix first (pci:v00008086d000010D3sv...), so only the few
 * patterns that can match are run as RegExps, and those are compiled on first use.
 */
export class AliasIndex {
  private readonly entries: { prefix: string; pattern: string; module: string; re?: RegExp }[];
  constructor(aliases: readonly ModuleAlias[]) {
    this.entries = aliases.map((a) => ({ prefix: literalPrefix(a.pattern), pattern: a.pattern, module: a.module }));
  }

  get size(): number { return this.entries.length; }

  /**
   * The kinds of device the patterns name (pci, usb, virtio, ...: a modalias's text before its colon,
   * which is also its bus's name), so a scan can skip the buses no shipped module drives.
   */
  kinds(): Set<string> {
    return new Set(this.entries.map((e) => e.prefix.split(':')[0]!).filter(Boolean));
  }

  /** The modules whose aliases match `modalias`, each once, in modules.alias order. */
  modulesFor(modalias: string): string[] {
    const out: string[] = [];
    for (const e of this.entries) {
      if (!modalias.startsWith(e.prefix) || out.includes(e.module)) continue;
      e.re ??= globRegExp(e.pattern);
      if (e.re.test(modalias)) out.push(e.module);
    }
    return out;
  }
}
