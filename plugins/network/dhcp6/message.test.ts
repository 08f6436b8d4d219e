// DHCPv6 codec: a real Advertise (dnsmasq 2.90, captured on a veth: fixtures/), messages built
// and read back, and what a truncated or foreign message does.
import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  answerOf, decodeDhcp6, decodeIaNa, decodeOptions, duidLL, encodeDhcp6, encodeIaNa, first, MSG, OPTION, opt, STATUS,
} from './message.ts';

const fixture = (name: string) => Buffer.from(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')
  .trim(), 'hex');

t.test('dnsmasq\'s Advertise: server, IA_NA with an address, DNS, search list, NTP', async (t) => {
  const m = decodeDhcp6(fixture('dnsmasq-2.90-advertise.hex'))!;
  t.equal(m.type, MSG.ADVERTISE);
  t.equal(m.xid, 0x123456, 'the transaction id the Solicit carried');
  t.same(first(m, OPTION.CLIENTID), duidLL('72:29:5e:dc:09:9d'), 'our DUID-LL echoed');
  const a = answerOf(m, 1)!;
  t.equal(a.serverId.toString('hex'), '00030001bead2f09aff6', 'the server\'s DUID-LL');
  t.same(a.ia?.addresses, [{ address: '2001:db8:1::10e', preferred: 120, valid: 120 }]);
  t.match(a.ia, { iaid: 1, t1: 60, t2: 105 });
  t.match(a.status, { code: STATUS.SUCCESS, message: 'success' }, 'the message\'s status');
  t.same(a.dns, ['2001:db8::53']);
  t.same(a.domains, ['lab6.test']);
  t.same(a.ntp, ['2001:db8::123'], 'from the NTP server option\'s address sub-option');
  t.equal(answerOf(m, 2)?.ia, undefined, 'an IA_NA of another IAID is not ours');
});

t.test('a Reply built and read back', async (t) => {
  const reply = encodeDhcp6({
    type: MSG.REPLY, xid: 0xabcdef, options: [
      [OPTION.SERVERID, Buffer.from('000100', 'hex')], [OPTION.CLIENTID, duidLL('52:54:00:12:34:56')],
      encodeIaNa({ iaid: 7, t1: 100, t2: 160, addresses: [
        { address: '2001:db8::5', preferred: 200, valid: 300 }, { address: '2001:db8::6', preferred: 0, valid: 0 },
      ] }),
      opt.ips(OPTION.DNS_SERVERS, ['2001:db8::1', '2001:db8::2']), opt.names(OPTION.DOMAIN_LIST, ['a.test', 'b.test']),
      opt.ips(OPTION.SNTP_SERVERS, ['2001:db8::7']), [OPTION.INFORMATION_REFRESH_TIME, Buffer.from([0, 0, 3, 0])],
    ],
  });
  t.equal(reply[0], MSG.REPLY);
  t.equal(reply.readUIntBE(1, 3), 0xabcdef, '3-byte transaction id');
  const a = answerOf(decodeDhcp6(reply)!, 7)!;
  t.same(a.ia?.addresses.map((x) => x.address), ['2001:db8::5', '2001:db8::6']);
  t.same(a.dns, ['2001:db8::1', '2001:db8::2']);
  t.same(a.domains, ['a.test', 'b.test']);
  t.same(a.ntp, ['2001:db8::7'], 'SNTP servers when there is no NTP server option');
  t.equal(a.refresh, 768);
});

t.test('statuses: the message\'s, and an address refused inside the IA', async (t) => {
  const addr = Buffer.concat([Buffer.from('20010db8000000000000000000000009', 'hex'), Buffer.alloc(8)]);
  const refused = Buffer.concat([addr, Buffer.from('000d0002', 'hex'), Buffer.from([0, STATUS.NOT_ON_LINK])]);
  const ia = Buffer.concat([Buffer.alloc(12), Buffer.from('0005', 'hex'), Buffer.from([0, refused.length]), refused]);
  t.same(decodeIaNa(ia)?.addresses, [], 'an IAADDR with NotOnLink is not leased');
  const m = decodeDhcp6(encodeDhcp6({ type: MSG.ADVERTISE, xid: 1, options: [
    [OPTION.SERVERID, Buffer.from([1])], opt.status(STATUS.NO_ADDRS_AVAIL, 'pool empty'),
  ] }))!;
  t.match(answerOf(m)?.status, { code: STATUS.NO_ADDRS_AVAIL, name: 'NoAddrsAvail', message: 'pool empty' });
});

t.test('an IA_NA with T1 > T2 and an address preferred longer than valid are discarded (RFC 8415 21.4, 21.6)',
  async (t) => {
    const reply = (t1: number, t2: number, preferred: number, valid: number) => answerOf(decodeDhcp6(encodeDhcp6({
      type: MSG.REPLY, xid: 1, options: [[OPTION.SERVERID, Buffer.from([1])], opt.ips(OPTION.DNS_SERVERS, ['::1']),
        encodeIaNa({ iaid: 3, t1, t2, addresses: [{ address: '2001:db8::9', preferred, valid }] })],
    }))!, 3)!;
    t.equal(reply(200, 100, 300, 400).ia, undefined, 'T1 > T2: the IA goes');
    t.same(reply(200, 100, 300, 400).dns, ['::1'], 'the rest of the message is read');
    t.same(reply(0, 0, 300, 400).ia?.addresses.length, 1, 'T1 = T2 = 0 is the client\'s choice, not invalid');
    t.same(reply(100, 200, 500, 400).ia?.addresses, [], 'preferred > valid: the address goes');
  });

t.test('malformed input', async (t) => {
  t.equal(decodeDhcp6(Buffer.from([7, 0, 0])), undefined, 'shorter than the header');
  t.equal(decodeOptions(Buffer.from('0017001020010db8', 'hex')), undefined, 'an option longer than what is left');
  const options = [opt.ips(OPTION.DNS_SERVERS, ['::1'])];
  const noServer = decodeDhcp6(encodeDhcp6({ type: MSG.REPLY, xid: 1, options }))!;
  t.equal(answerOf(noServer), undefined, 'a Reply without a server id is discarded (RFC 8415 16.10)');
  t.same(answerOf(noServer, undefined, true)?.dns, ['::1'], 'unless the caller takes one without (stateless)');
});
