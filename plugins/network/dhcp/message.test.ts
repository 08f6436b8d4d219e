import t from 'tap';
import { decodeUdp, encodeUdp } from './ipv4-udp.ts';
import { decodeDhcp, DHCP, encodeDhcp, leaseOf, messageType, opt, OPT } from './message.ts';

t.test('DISCOVER round trip inside IPv4/UDP with valid checksums', async (t) => {
  const msg = encodeDhcp({
    op: 1, xid: 0x1234abcd, broadcast: true, chaddr: '52:54:00:12:34:56',
    options: new Map([[OPT.MESSAGE_TYPE, opt.u8(DHCP.DISCOVER)], [OPT.PARAMS, opt.bytes([1, 3, 6])]]),
  });
  t.equal(msg.length, 300, 'padded to the BOOTP minimum');
  const pkt = encodeUdp({ src: '0.0.0.0', dst: '255.255.255.255', srcPort: 68, dstPort: 67, payload: msg });
  t.equal(pkt.readUInt16BE(2), pkt.length, 'IP total length');
  const udp = decodeUdp(pkt)!;
  t.match(udp, { src: '0.0.0.0', dst: '255.255.255.255', srcPort: 68, dstPort: 67 });
  const back = decodeDhcp(udp.payload)!;
  t.equal(back.xid, 0x1234abcd);
  t.equal(back.chaddr, '52:54:00:12:34:56');
  t.ok(back.broadcast);
  t.equal(messageType(back), DHCP.DISCOVER);
  const corrupt = Buffer.from(pkt);
  corrupt[8] = 1;
  t.equal(decodeUdp(corrupt), null, 'a bad IP header checksum is dropped');
});

t.test('an ACK becomes a lease', async (t) => {
  const ack = decodeDhcp(encodeDhcp({
    op: 2, xid: 7, yiaddr: '10.0.2.15', chaddr: '52:54:00:12:34:56',
    options: new Map([
      [OPT.MESSAGE_TYPE, opt.u8(DHCP.ACK)], [OPT.SERVER_ID, opt.ip('10.0.2.2')],
      [OPT.LEASE_TIME, Buffer.from([0, 1, 0x51, 0x80])],
      [OPT.SUBNET_MASK, opt.ip('255.255.255.0')], [OPT.ROUTER, opt.ip('10.0.2.2')],
      [OPT.DNS, Buffer.concat([opt.ip('10.0.2.3'), opt.ip('10.0.2.4')])],
      [OPT.DOMAIN, opt.str('example.test')],
    ]),
  }))!;
  t.same(leaseOf(ack), {
    address: '10.0.2.15', prefix: 24, server: '10.0.2.2', leaseSeconds: 86400, t1: 43200, t2: 75600,
    router: '10.0.2.2', dns: ['10.0.2.3', '10.0.2.4'], ntp: [], domain: 'example.test',
  });
  t.equal(leaseOf({ ...ack, options: new Map() }), null, 'no server id or lease time: no lease');
});
