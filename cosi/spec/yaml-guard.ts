// yaml-guard: YAML from untrusted input, parsed without letting it hold PID 1's event
// loop. The parser recurses once per nesting level (100,000 levels overflow the stack
// after most of a second), costs about 0.7 ms per KiB, and its duplicate-key check is
// quadratic (20,000 keys: 1.5 s), so nesting is bounded by a linear scan (scanNesting),
// size by a limit, and duplicate keys are found in one pass (parseUntrustedYaml).
import { yamlLibrary } from './yaml-library.cjs';

/** Deepest flow nesting ([ and {) accepted by default. */
export const MAX_FLOW_DEPTH = 64;
/** Furthest block nesting accepted, as the column where a line's content starts ("- - x" counts as indentation). */
export const MAX_BLOCK_COLUMN = 512;

const isSpace = (c: number) => c === 0x20 || c === 0x09;
const NL = 0x0a;

/**
 * Why `text` nests deeper than a YAML parser may be asked to go, or undefined. Linear
 * and without recursion. Quoted scalars, comments and block scalars (| >) are skipped;
 * a bracket inside a plain scalar ("a [b") opens nothing. Errs on the side of letting
 * text through: the parser reports malformed YAML itself.
 */
export function scanNesting(
  text: string, maxFlow = MAX_FLOW_DEPTH, maxColumn = MAX_BLOCK_COLUMN,
): string | undefined {
  let flow = 0;
  let line = 1;
  let i = 0;
  const n = text.length;
  // Block scalar content: lines indented more than this belong to it (-1: not in one).
  let scalarParent = -1;
  const skipQuoted = (q: number): void => {
    for (i++; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === NL) line++;
      else if (q === 0x22 && c === 0x5c) i++; // \" in a double-quoted scalar
      else if (c === q) {
        if (q === 0x27 && text.charCodeAt(i + 1) === 0x27) {
          i++;
          continue;
        } // '' in a single-quoted one
        return;
      }
    }
  };
  while (i < n) {
    // At a line start: measure the indentation, with compact indicators ("- ", "? ", ": ") counted as indentation.
    const start = i;
    while (i < n && text.charCodeAt(i) === 0x20) i++;
    const indent = i - start;
    if (i < n && text.charCodeAt(i) !== NL && scalarParent >= 0 && indent > scalarParent) {
      while (i < n && text.charCodeAt(i) !== NL) i++;
      if (i < n) {
        i++;
        line++;
      }
      continue;
    }
    if (i < n && text.charCodeAt(i) !== NL && text.charCodeAt(i) !== 0x23) scalarParent = -1;
    if (flow === 0) {
      for (;;) {
        const c = text.charCodeAt(i);
        if ((c === 0x2d || c === 0x3f || c === 0x3a) && (isSpace(text.charCodeAt(i + 1)))) {
          i += 2;
          while (i < n && isSpace(text.charCodeAt(i))) i++;
        } else break;
      }
      if (i - start > maxColumn && text.charCodeAt(i) !== NL && i < n) {
        return `line ${line}: nested deeper than the limit (content starts at column ${i - start + 1}, `
          + `at most ${maxColumn} allowed)`;
      }
    }
    // The rest of the line.
    let valueStart = true; // a flow collection or quoted scalar may open here
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === NL) {
        line++;
        i++;
        break;
      }
      if (c === 0x23 && (i === 0 || isSpace(text.charCodeAt(i - 1)) || text.charCodeAt(i - 1) === NL)) {
        while (i < n && text.charCodeAt(i) !== NL) i++;
        continue;
      }
      if (flow > 0 || valueStart) {
        if (c === 0x5b || c === 0x7b) {
          if (++flow > maxFlow) {
            return `line ${line}: nested deeper than the limit (more than ${maxFlow} open [ or {)`;
          }
          valueStart = true;
          i++;
          continue;
        }
        if (c === 0x22 || c === 0x27) {
          skipQuoted(c);
          i++;
          valueStart = false;
          continue;
        }
        if (flow === 0 && (c === 0x7c || c === 0x3e)) {
          scalarParent = indent;
          valueStart = false;
          i++;
          continue;
        }
      }
      if (flow > 0) {
        if (c === 0x5d || c === 0x7d) flow--;
        valueStart = c === 0x2c || c === 0x5b || c === 0x7b || (c === 0x3a && isSpace(text.charCodeAt(i + 1)))
          || (isSpace(c) && valueStart);
      } else {
        // Block context: a value starts after ": " (and spaces); anything else is inside a plain scalar or key.
        valueStart = (c === 0x3a && isSpace(text.charCodeAt(i + 1))) || (isSpace(c) && valueStart);
      }
      i++;
    }
  }
  return undefined;
}

/** The most nodes aliases may expand to (an alias bomb is refused, not expanded). */
export const MAX_ALIAS_COUNT = 100;
/**
 * The largest YAML document parsed from untrusted input: the parser takes 0.7 ms per KiB, and up to
 * 2 ms per KiB for the worst shape (thousands of tiny keys), so 32 KiB stays near 50 ms of the event loop.
 */
export const MAX_YAML_DOCUMENT_BYTES = 32 << 10;

/**
 * `at`: where a syntax error is, 1-based, in the text parsed; the message counts lines from
 * `firstLine` (the text's first line in the input it came from).
 */
export type YamlParsed = { ok: true; value: unknown; warnings?: string[] }
  | { ok: false; message: string; at?: { line: number; col: number } };

/**
 * The lines around a syntax error, numbered, with a caret under its column; `firstLine`: the number
 * of the text's first line in the input it came from. At the end of the input (a bracket never
 * closed) the last line with text is shown above the empty one the parser stopped at.
 */
export function codeFrame(text: string, at: { line: number; col: number }, firstLine = 1): string {
  const lines = text.split('\n');
  const from = Math.max(1, at.line - (lines[at.line - 1]?.trim() ? 0 : 1));
  const width = String(firstLine + at.line - 1).length;
  const shown: string[] = [];
  for (let n = from; n <= at.line; n++) {
    shown.push(`  ${String(firstLine + n - 1).padStart(width)} | ${(lines[n - 1] ?? '').trimEnd()}`);
  }
  shown.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, at.col - 1))}^`);
  return shown.join('\n');
}

/** Every key a mapping of `doc` has again (each later occurrence), found in one pass (the parser's own check is
 * quadratic); `line` gives a key node's line. */
function duplicateKeys(node: unknown, line: (n: unknown) => number | undefined): { key: string; line?: number }[] {
  const { isMap, isScalar, isSeq } = yamlLibrary();
  const found: { key: string; line?: number }[] = [];
  const stack: unknown[] = [node];
  while (stack.length) {
    const n = stack.pop();
    if (isMap(n)) {
      const seen = new Set<string>();
      for (const pair of n.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(k)) {
          const at = line(pair.key);
          found.push({ key: k, ...(at !== undefined ? { line: at } : {}) });
        }
        seen.add(k);
        stack.push(pair.key, pair.value);
      }
    } else if (isSeq(n)) stack.push(...n.items);
  }
  return found.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/**
 * How a YAML text is read. `yaml-1.2`: ours (a duplicated key refuses the document). `pyyaml`: as cloud-init's
 * PyYAML safe_load reads it, so cloud-init input means here what it means there: YAML 1.1 (an unquoted 0600 is 384,
 * yes/no/on/off are booleans, !!binary is bytes) and a duplicated key's last value wins, with a warning.
 */
export type YamlDialect = 'yaml-1.2' | 'pyyaml';

/**
 * One YAML document from untrusted input, or why not: at most `maxBytes`, nesting scanned
 * first, duplicate keys refused (found in linear time), aliases bounded. Every untrusted
 * YAML text (a yaml_spec, a config document, cloud-init's) is parsed here.
 */
export function parseUntrustedYaml(
  text: string, o: { maxBytes?: number; maxDepth?: number; firstLine?: number; dialect?: YamlDialect } = {},
): YamlParsed {
  const maxBytes = o.maxBytes ?? MAX_YAML_DOCUMENT_BYTES;
  if (text.length > maxBytes) {
    return { ok: false, message: `${(text.length / 1024).toFixed(0)} KiB, larger than the ${maxBytes >> 10} KiB `
      + 'a YAML document may be' };
  }
  const deep = scanNesting(text, o.maxDepth);
  if (deep) return { ok: false, message: deep };
  const pyyaml = o.dialect === 'pyyaml';
  const { LineCounter, parseDocument } = yamlLibrary();
  const lines = new LineCounter();
  const d = parseDocument(text, { uniqueKeys: false, lineCounter: lines, ...(pyyaml ? { version: '1.1' } : {}) });
  if (d.errors.length) {
    const e = d.errors[0]!;
    const first = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    const at = e.linePos?.[0];
    return {
      ok: false,
      message: `not valid YAML: ${first}${at ? ` (line ${(o.firstLine ?? 1) + at.line - 1}, column ${at.col})` : ''}`,
      ...(at ? { at: { line: at.line, col: at.col } } : {}),
    };
  }
  const lineOf = (n: unknown) => {
    const start = (n as { range?: [number] }).range?.[0];
    return start === undefined ? undefined : (o.firstLine ?? 1) + lines.linePos(start).line - 1;
  };
  const dups = duplicateKeys(d.contents, lineOf);
  if (dups.length && !pyyaml) {
    return { ok: false, message: `not valid YAML: the key "${dups[0]!.key}" appears twice in a mapping` };
  }
  const warnings = dups.map((x) => `${x.line !== undefined ? `line ${x.line}: ` : ''}the key "${x.key}" appears `
    + 'again in its mapping: the last value is used, as cloud-init does');
  try {
    return { ok: true, value: d.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), ...(warnings.length ? { warnings } : {}) };
  } catch (e) {
    return { ok: false, message: `not accepted: ${(e as Error).message}` };
  }
}
