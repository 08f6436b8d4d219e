// RTM_NEWNDUSEROPT as the kernel sent it for dnsmasq 2.90's router advertisement (fixtures/, captured
// on a veth): one message per option; RDNSS and DNSSL read, the prefix option passed over.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { decodeNdUserOpt } from './nduseropt.ts';
import { encodeDnsName, readDnsName, readDnsNames } from '../dns-name.ts';

const fixture = (name: string) => Buffer.from(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')
  .trim(), 'hex');

t.test('RDNSS', async (t) => {
  t.same(decodeNdUserOpt(fixture('nduseropt-rdnss.hex')), {
    index: 3, router: 'fe80::bcad:2fff:fe09:aff6', servers: [{ address: '2001:db8::53', lifetime: 1800 }], domains: [],
  });
});

t.test('DNSSL', async (t) => {
  t.match(decodeNdUserOpt(fixture('nduseropt-dnssl.hex')), {
    index: 3, servers: [], domains: [{ name: 'lab6.test', lifetime: 1800 }],
  });
});

t.test('a prefix option carries no DNS', async (t) => {
  t.match(decodeNdUserOpt(fixture('nduseropt-prefix.hex')), { index: 3, servers: [], domains: [] });
});

t.test('what is not from a router advertisement, or runs short', async (t) => {
  const rdnss = fixture('nduseropt-rdnss.hex');
  const solicit = Buffer.from(rdnss);
  solicit[8] = 133;
  t.equal(decodeNdUserOpt(solicit), undefined, 'ICMPv6 type 133 (a solicitation) is not read');
  const zero = Buffer.from(rdnss);
  zero[17] = 0;
  t.same(decodeNdUserOpt(zero)?.servers, [], 'an option of length 0 ends the reading (RFC 4861 4.6)');
  t.equal(decodeNdUserOpt(rdnss.subarray(0, 10)), undefined, 'shorter than the header');
});

t.test('DNS names', async (t) => {
  t.same(readDnsName(encodeDnsName('Example.TEST.'), 0), { name: 'example.test', next: 14 });
  t.same(readDnsNames(Buffer.concat([encodeDnsName('a.test'), encodeDnsName('b.test'), Buffer.alloc(3)])),
    ['a.test', 'b.test'], 'a list with zero padding');
  t.equal(readDnsName(Buffer.from([5, 0x61]), 0), undefined, 'a label running past the end');
  t.equal(readDnsName(Buffer.from([0xc0, 0x0c]), 0), undefined, 'compression (not allowed here) is refused');
});
