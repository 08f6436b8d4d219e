// rtnetlink codec tests, from a message the kernel really sent (fixtures/: the
// RTM_NEWLINK dump answer for `lo` in a fresh network namespace, Linux 6.1).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createLinkRequest, decodeLink, getLinksRequest, IFF, RTM, setLinkRequest } from './link.ts';
import {
  attrMap, decodeAttrs, decodeMessages, encodeMessage, errorOf, NLM_F, NLMSG_ERROR,
} from '../../../machinery/netlink/netlink.ts';

const captured = Buffer.from(
  readFileSync(new URL('fixtures/lo-newlink-fresh-netns.hex', import.meta.url), 'utf8').trim(), 'hex',
);

t.test('decodes the kernel\'s RTM_NEWLINK for lo', async (t) => {
  const [m, ...rest] = decodeMessages(captured);
  t.equal(rest.length, 0);
  t.equal(m!.type, RTM.NEWLINK);
  t.equal(m!.flags & NLM_F.MULTI, NLM_F.MULTI, 'part of a dump');
  const link = decodeLink(m!.payload);
  t.same({
    index: link.index, name: link.name, type: link.type, up: link.up, mtu: link.mtu, operState: link.operState,
    mac: link.mac,
  }, {
    index: 1, name: 'lo', type: 'loopback', up: false, mtu: 65536, operState: 'down', mac: '00:00:00:00:00:00',
  });
  t.equal(link.flags & IFF.LOOPBACK, IFF.LOOPBACK);
});

t.test('requests are laid out as the kernel expects', async (t) => {
  const dump = getLinksRequest(7);
  t.equal(dump.toString('hex'), '20000000' + '1200' + '0103' + '07000000' + '00000000'
    + '00000000000000000000000000000000', 'RTM_GETLINK dump, 16-byte ifinfomsg');
  const set = decodeMessages(setLinkRequest(9, 3, { up: true, mtu: 1400 }))[0]!;
  t.equal(set.type, RTM.NEWLINK);
  t.equal(set.flags, NLM_F.REQUEST | NLM_F.ACK);
  t.equal(set.payload.readInt32LE(4), 3, 'index');
  t.equal(set.payload.readUInt32LE(8), IFF.UP, 'flags');
  t.equal(set.payload.readUInt32LE(12), IFF.UP, 'change mask');
  t.equal(attrMap(set.payload.subarray(16)).get(4)!.readUInt32LE(0), 1400, 'IFLA_MTU');
  const create = decodeMessages(createLinkRequest(1, { name: 'dummy0', kind: 'dummy' }))[0]!;
  const attrs = decodeAttrs(create.payload.subarray(16));
  t.equal(attrs[0]!.value.toString(), 'dummy0\0');
  t.ok(attrs[1]!.nested, 'IFLA_LINKINFO is nested');
  t.equal(decodeAttrs(attrs[1]!.value)[0]!.value.toString(), 'dummy\0');
});

t.test('errors and truncation', async (t) => {
  const err = Buffer.alloc(20);
  err.writeInt32LE(-17, 0);
  t.equal(errorOf({ type: NLMSG_ERROR, flags: 0, seq: 1, pid: 0, payload: err }), 17, 'EEXIST');
  t.throws(() => decodeMessages(captured.subarray(0, 100)), /claims 1468 bytes/);
  t.equal(encodeMessage(1, 0, 0, Buffer.alloc(3)).length, 20, 'padded to 4 bytes');
});

t.test('IP text <-> bytes, IPv6 compressed as RFC 5952 says', async (t) => {
  const { ipBytes, ipString } = await import('./addr.ts');
  for (const ip of [
    '10.0.2.15', '2001:db8::10', '::1', 'fe80::5054:ff:fe12:3456', '2001:db8:0:1:1:1:1:1', '::',
  ]) t.equal(ipString(ipBytes(ip)), ip);
  t.equal(ipString(ipBytes('2001:0db8:0000:0000:0000:0000:0000:0001')), '2001:db8::1');
  t.throws(() => ipBytes('10.0.0'), /not an IP address/);
});
