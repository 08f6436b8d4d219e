import t from 'tap';
import { parseIpCmdline } from './ip-cmdline-parse.ts';

t.test('static forms', async (t) => {
  t.same(parseIpCmdline('10.0.2.15::10.0.2.2:255.255.255.0::eth0:off'), {
    dhcp: false, device: 'eth0', address: '10.0.2.15/24', gateway: '10.0.2.2', dns: [], ntp: [],
  });
  t.same(parseIpCmdline('192.0.2.5::192.0.2.1:28:node1:eth1:none:192.0.2.53:192.0.2.54:192.0.2.123'), {
    dhcp: false, device: 'eth1', hostname: 'node1', address: '192.0.2.5/28', gateway: '192.0.2.1',
    dns: ['192.0.2.53', '192.0.2.54'], ntp: ['192.0.2.123'],
  });
  t.same(parseIpCmdline('[2001:db8::5]::[2001:db8::1]:64::eth0:off'), {
    dhcp: false, device: 'eth0', address: '2001:db8::5/64', gateway: '2001:db8::1', dns: [], ntp: [],
  });
});

t.test('dhcp forms', async (t) => {
  t.same(parseIpCmdline('dhcp'), { dhcp: true, dns: [], ntp: [] });
  t.same(parseIpCmdline('eth0:dhcp'), { device: 'eth0', dhcp: true, dns: [], ntp: [] });
});

t.test('bad input names itself', async (t) => {
  t.throws(() => parseIpCmdline('10.0.2.999::10.0.2.2:24::eth0:off'), /client address "10.0.2.999"/);
  t.throws(() => parseIpCmdline('10.0.2.15::10.0.2.2:255.0.255.0::eth0:off'), /not contiguous/);
  t.throws(() => parseIpCmdline('10.0.2.15::gw:24::eth0:off'), /gateway "gw"/);
  t.throws(() => parseIpCmdline('::::h:eth0:off'), /no client address and no dhcp/);
});
