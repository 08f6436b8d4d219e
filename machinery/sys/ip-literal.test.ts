// ip-literal: the family node:net's isIP gives, for hand-picked addresses and non-addresses and for many random
// strings made of the characters addresses are made of; an IPv6 address's groups as Node's own socket address
// parser (BlockList) reads them.
import t from 'tap';
import { isIP, SocketAddress } from 'node:net';
import { ipFamily, ipv6Groups } from './ip-literal.ts';

const picked = [
  '', '0.0.0.0', '10.0.2.15', '255.255.255.255', '256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.4/24',
  '::', '::1', '1::', 'fe80::1%eth0', 'fe80::1%', 'fe80::1%a b', '2001:db8::8a2e:370:7334', '1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8::', ':::', '1:::2', '1::2::3',
  '::ffff:10.0.2.15', '::ffff:10.0.2', '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4', '1.2.3.4::', '12345::',
  'g::1', 'localhost', 'appliance.example.test', ' ::1', '::1 ', 'FE80::ABCD',
];

t.test('as isIP for hand-picked strings', async (t) => {
  for (const s of picked) t.equal(ipFamily(s), isIP(s), JSON.stringify(s));
});

t.test('as isIP for 200000 random strings of address characters', async (t) => {
  const alphabet = '0123456789abcdefABCDEF:.:::%';
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const differ: string[] = [];
  let addresses = 0;
  for (let i = 0; i < 200_000; i++) {
    const len = 1 + Math.floor(random() * 24);
    let s = '';
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(random() * alphabet.length)];
    if (isIP(s)) addresses++;
    if (ipFamily(s) !== isIP(s)) differ.push(s);
  }
  t.same(differ.slice(0, 10), [], 'none differs');
  t.ok(addresses > 100, `${addresses} of them are addresses: the comparison covers both answers`);
});

t.test('the groups of an IPv6 address, as Node parses it', async (t) => {
  for (const s of picked.filter((x) => isIP(x) === 6)) {
    const address = new SocketAddress({ address: s.split('%')[0]!, family: 'ipv6' }).address;
    const groups = ipv6Groups(s)!.map((g) => g.toString(16));
    t.equal(groups.join(':'), expand(address), s);
  }
});

/** Node's canonical text of an address, with `::` written out. */
function expand(a: string): string {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  const text = dotted ? a.replace(dotted[0], [((+dotted[1]! << 8) | +dotted[2]!).toString(16),
    ((+dotted[3]! << 8) | +dotted[4]!).toString(16)].join(':')) : a;
  const [h, tl] = text.split('::') as [string, string | undefined];
  const head = h ? h.split(':') : [];
  const tail = tl === undefined ? [] : tl ? tl.split(':') : [];
  const all = tl === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail];
  return all.map((g) => parseInt(g, 16).toString(16)).join(':');
}
