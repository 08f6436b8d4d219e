// ip-literal: whether a string is an IPv4 or IPv6 address, and an IPv6 address's groups, as node:net's isIP reads
// them (a %zone allowed after IPv6). Node's isIPv6 is one large regular expression, compiled on its first use: PID 1
// spent ~15 ms of its start there (the API certificate's names), before any milestone.

const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
const ZONE = /^[0-9a-zA-Z.:-]+$/;

/** 4 or 6 when `s` is an IPv4 or IPv6 address, else 0 (node:net's isIP). */
export function ipFamily(s: string): 0 | 4 | 6 {
  if (IPV4.test(s)) return 4;
  return ipv6Groups(s) ? 6 : 0;
}

/**
 * The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail as two groups, a %zone ignored),
 * or undefined when `s` is not one.
 */
export function ipv6Groups(s: string): number[] | undefined {
  const zone = s.indexOf('%');
  if (zone >= 0 && !ZONE.test(s.slice(zone + 1))) return undefined;
  const address = zone >= 0 ? s.slice(0, zone) : s;
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const compressed = halves.length === 2;
  const head = groupsOf(halves[0]!, !compressed);
  const tail = compressed ? groupsOf(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  if (!compressed) return head.length === 8 ? head : undefined;
  // `::` stands for one group of zeros at least.
  const zeros = 8 - head.length - tail.length;
  return zeros >= 1 ? [...head, ...Array<number>(zeros).fill(0), ...tail] : undefined;
}

/** The groups of one side of `::` (the whole address without one); `v4Tail`: its last may be dotted IPv4. */
function groupsOf(part: string, v4Tail: boolean): number[] | undefined {
  if (part === '') return [];
  const out: number[] = [];
  const groups = part.split(':');
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!;
    if (HEX_GROUP.test(g)) {
      out.push(parseInt(g, 16));
    } else if (v4Tail && i === groups.length - 1 && IPV4.test(g)) {
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      out.push((a << 8) | b, (c << 8) | d);
    } else {
      return undefined;
    }
  }
  return out;
}
