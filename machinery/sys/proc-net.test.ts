import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { decodeSocketAddress, parseProcNet } from './proc-net.ts';

t.test('addresses: IPv4 and IPv6 words in host order, ports in hex, zeros compressed', async (t) => {
  t.equal(decodeSocketAddress('0100007F:1F90'), '127.0.0.1:8080');
  t.equal(decodeSocketAddress('00000000:0000'), '0.0.0.0:0');
  t.equal(decodeSocketAddress('00000000000000000000000001000000:C350'), '[::1]:50000');
  t.equal(decodeSocketAddress('000080FE00000000FF005452120035FE:0222'), '[fe80::5254:ff:fe35:12]:546');
  t.equal(decodeSocketAddress('00000000000000000000000000000000:0035'), '[::]:53');
});

t.test('rows: state names for TCP, UNCONN for an unconnected UDP socket, the inode', async (t) => {
  const tcp = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'
    + '   0: 00000000:C350 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1 0000 100 0\n';
  t.same(parseProcNet(tcp, 'tcp'), [{ protocol: 'tcp', local: '0.0.0.0:50000', remote: '0.0.0.0:0', state: 'LISTEN',
    inode: 1234 }]);
  const udp = 'header\n  1: 0F02000A:0044 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 99 2 0 0\n';
  t.match(parseProcNet(udp, 'udp'), [{ local: '10.0.2.15:68', state: 'UNCONN', inode: 99 }]);
});

t.test('this host\'s own table holds a socket this test listens on', async (t) => {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const rows = parseProcNet(readFileSync('/proc/net/tcp', 'utf8'), 'tcp');
  t.ok(rows.some((r) => r.local === `127.0.0.1:${port}` && r.state === 'LISTEN'), `127.0.0.1:${port} LISTEN`);
});
