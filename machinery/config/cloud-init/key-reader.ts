// key-reader: a mapping of someone else's format read key by key, so that nothing in it is dropped
// silently. Each key is taken (the translation applies it), ignored with why, or, left over when
// the mapping is done, listed as not supported. Paths are written as the format's reference
// documents write them (ethernets.eth0.routes[1].table), and the applied and ignored ones are
// both kept: tests walk a format's documented keys and check each is one or the other.
import { isMap } from '../safe-yaml.ts';

/** What a translation did with the keys it was given. */
export interface KeyAccount {
  /** Paths of keys the translation applies. */
  applied: string[];
  /** "<prefix> <path>: <why>" for each key it does not. */
  ignored: string[];
}

export class KeyReader {
  private readonly seen = new Set<string>();

  constructor(
    readonly value: Readonly<Record<string, unknown>>, readonly path: string,
    private readonly account: KeyAccount, private readonly prefix: string,
  ) {}

  /** A reader of `value` when it is a mapping; otherwise the key is ignored as malformed. */
  static of(value: unknown, path: string, account: KeyAccount, prefix: string): KeyReader | undefined {
    if (isMap(value)) return new KeyReader(value, path, account, prefix);
    account.ignored.push(`${prefix} ${path}: must be a mapping`);
    return undefined;
  }

  at(key: string): string {
    return this.path ? `${this.path}.${key}` : key;
  }

  has(key: string): boolean {
    return Object.hasOwn(this.value, key);
  }

  /** The key's value, counted as applied (undefined when absent: nothing to count). */
  take(key: string): unknown {
    if (!this.has(key)) return undefined;
    this.seen.add(key);
    this.account.applied.push(this.at(key));
    return this.value[key];
  }

  /**
   * The key's value read as a type (`read` gives undefined for anything else), counted as applied; a value of another
   * type is listed as ignored, saying what it should have been.
   */
  typed<T>(key: string, read: (v: unknown) => T | undefined, what: string): T | undefined {
    if (!this.has(key)) return undefined;
    const v = read(this.value[key]);
    if (v === undefined) {
      this.ignore(key, `${JSON.stringify(this.value[key])} is not ${what}: not applied`);
      return undefined;
    }
    return this.take(key) === undefined ? undefined : v;
  }

  uint(key: string): number | undefined { return this.typed(key, uintOf, 'a whole number'); }
  bool(key: string): boolean | undefined { return this.typed(key, boolOf, 'true or false'); }
  str(key: string): string | undefined { return this.typed(key, textOf, 'text'); }

  /** One of `allowed` (a bonding mode, a hash policy): anything else is listed, naming what is allowed. */
  choice<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    return this.typed(key, (v) => allowed.find((a) => a === v), `one of ${allowed.join(', ')}`);
  }

  /** The key's value as a reader of its own (a nested mapping), counted as applied. */
  map(key: string): KeyReader | undefined {
    if (!this.has(key)) return undefined;
    this.seen.add(key);
    const r = KeyReader.of(this.value[key], this.at(key), this.account, this.prefix);
    if (r) this.account.applied.push(this.at(key));
    return r;
  }

  /** Lists the key (when present) as not applied, with why. */
  ignore(key: string, why: string): void {
    if (!this.has(key)) return;
    this.seen.add(key);
    this.account.ignored.push(`${this.prefix} ${this.at(key)}: ${why}`);
  }

  /**
   * Lists each entry of the key's mapping as not applied (`bonds.bond0: ...`); the key itself counts as read. A key
   * that is no mapping, or an empty one, is listed itself.
   */
  ignoreEach(key: string, why: string): void {
    if (!this.has(key)) return;
    this.seen.add(key);
    const v = this.value[key];
    const ids = isMap(v) ? Object.keys(v) : [];
    if (!ids.length) this.account.ignored.push(`${this.prefix} ${this.at(key)}: ${why}`);
    else this.account.applied.push(this.at(key));
    for (const id of ids) this.account.ignored.push(`${this.prefix} ${this.at(key)}.${id}: ${why}`);
  }

  /** Lists a value found at a path below this one (a list item, a part of a value) as not applied. */
  ignoreAt(path: string, why: string): void {
    this.account.ignored.push(`${this.prefix} ${path}: ${why}`);
  }

  /** Lists every key not taken or ignored yet, with `why`. */
  done(why = 'not supported by this system'): void {
    for (const k of Object.keys(this.value)) {
      if (!this.seen.has(k)) this.account.ignored.push(`${this.prefix} ${this.at(k)}: ${why}`);
    }
  }
}

/** A value that may be given as one item or a list -> the list. */
export const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);

/** Names given as a list or as one space-separated string ("a.example b.example", as v1's dns_search may be). */
export function wordsOf(v: unknown): string[] {
  return listOf(v).flatMap((x) => (typeof x === 'string' ? x.split(/[\s,]+/).filter(Boolean)
    : typeof x === 'number' ? [String(x)] : []));
}

const textOf = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** An unsigned integer as YAML gave it (a number, or digits in a string), else undefined. */
export function uintOf(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 0 && n <= 0xffffffff ? n : undefined;
}

/** PyYAML has already made yes/no/on/off/true/false booleans; a quoted "true" still means true to netplan. */
export function boolOf(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|yes|on|y)$/i.test(v)) return true;
  if (typeof v === 'string' && /^(false|no|off|n)$/i.test(v)) return false;
  return undefined;
}
