// dns-name: domain names in DNS wire format (RFC 1035 3.1), uncompressed as RFC 8106's DNSSL and
// RFC 8415's domain search list carry them: length-prefixed labels ending in a zero byte.

/** The name at `off` and the offset after it; undefined when it runs past `b` or a label is too long. */
export function readDnsName(b: Buffer, off: number): { name: string; next: number } | undefined {
  const labels: string[] = [];
  let i = off;
  while (i < b.length) {
    const len = b[i]!;
    if (len === 0) return { name: labels.join('.'), next: i + 1 };
    if (len > 63 || i + 1 + len > b.length) return undefined;
    labels.push(b.toString('latin1', i + 1, i + 1 + len).toLowerCase());
    i += 1 + len;
  }
  return undefined;
}

/** Every name of a list that fills `b` (trailing zero padding allowed); stops at the first malformed one. */
export function readDnsNames(b: Buffer): string[] {
  const out: string[] = [];
  for (let off = 0; off < b.length && b[off] !== 0;) {
    const n = readDnsName(b, off);
    if (!n) break;
    out.push(n.name);
    off = n.next;
  }
  return out;
}

export function encodeDnsName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])),
    Buffer.from([0])]);
}
