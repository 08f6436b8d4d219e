// fuzz: seeded hostile inputs for the parsers and the wire: random bytes, mutations of
// valid messages (bit flips, truncation, splices, repeated fields), and YAML built to
// hurt (deep nesting, alias bombs, huge maps, stray quotes). The same seed gives the same
// inputs, so a failure can be replayed.

/** A small, fast, seeded PRNG (mulberry32). */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next, int,
    pick: <T>(xs: readonly T[]) => xs[int(xs.length)]!,
    bytes: (n: number) => {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = int(256);
      return b;
    },
  };
}

export interface Rng {
  next(): number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
  bytes(n: number): Buffer;
}

/** A mutation of `valid`: one of several strategies, sometimes stacked. */
export function mutate(r: Rng, valid: Uint8Array): Buffer {
  let b: Buffer = Buffer.from(valid);
  const rounds = 1 + r.int(3);
  for (let k = 0; k < rounds; k++) {
    switch (r.int(8)) {
      case 0:
        if (b.length) b[r.int(b.length)]! ^= 1 << r.int(8);
        break; // flip a bit
      case 1:
        b = b.subarray(0, r.int(b.length + 1));
        break; // truncate
      case 2:
        if (b.length) b[r.int(b.length)] = r.pick([0, 0xff, 0x7f, 0x80, 0x0a, 0x12, 0x1a]);
        break;
      case 3: {
        const at = r.int(b.length + 1);
        b = Buffer.concat([b.subarray(0, at), r.bytes(1 + r.int(16)), b.subarray(at)]);
        break;
      }
      case 4:
        b = Buffer.concat([b, b]);
        break; // every field twice
      case 5: { // a slice of itself spliced in
        const at = r.int(b.length + 1);
        b = Buffer.concat([b.subarray(0, at), b.subarray(r.int(b.length + 1))]);
        break;
      }
      case 6: // a huge length prefix where a length goes
        b = Buffer.concat([b, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])]);
        break;
      default:
        b = r.bytes(r.int(64));
        break; // noise
    }
  }
  return b;
}

/** YAML text meant to hurt a parser or a validator. */
export function hostileYaml(r: Rng): string {
  switch (r.int(10)) {
    case 0: return '['.repeat(1000 + r.int(200_000));
    case 1: return `${'- '.repeat(100 + r.int(2000))}x`;
    case 2: { // an alias bomb
      const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
      for (let i = 1; i < 9; i++) {
        const prev = String.fromCharCode(96 + i);
        const cur = String.fromCharCode(97 + i);
        lines.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
      }
      return lines.join('\n');
    }
    case 3: return Array.from({ length: 1000 + r.int(20_000) }, (_, i) => `k${i}: v`).join('\n');
    case 4: return `text: "${'x'.repeat(r.int(200_000))}`;
    case 5: return `{${Array.from({ length: 100 + r.int(1000) }, (_, i) => `a${i}: {`).join('')}`;
    case 6: return r.bytes(r.int(512)).toString('latin1');
    case 7: return `text: ${r.pick(['!!binary', '!!js/function', '&x', '*y', '? [', '|-\n  x\n y', '"\\', "'''"])}`;
    case 8: return `text: ${'"'.repeat(r.int(64))}${'#'.repeat(r.int(8))}\n---\n${'...\n'.repeat(r.int(8))}`;
    default: {
      const keys = ['text', 'priority', 'address', 'link', 'mtu', 'servers', 'layer', 'enabled'];
      return Array.from({ length: 1 + r.int(6) }, () =>
        `${r.pick(keys)}: ${r.pick(['1', '-1', '1e309', 'null', '[]', '{}', '"x"', 'true', '0x10', '~', '.nan'])}`)
        .join('\n');
    }
  }
}
