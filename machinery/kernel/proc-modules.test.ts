import t from 'tap';
import { readFileSync } from 'node:fs';
import { loadOrder, moduleNameOf, parseBuiltin, parseModulesDep } from './modules-dep.ts';
import { parseProcModules } from './proc-modules.ts';

t.test('/proc/modules lines, as the kernel prints them', async (t) => {
  t.same(parseProcModules(
    'vxlan 106496 0 - Live 0x0000000000000000\nudp_tunnel 28672 1 vxlan, Live 0x0000000000000000 (O)\n',
  ), [
    { name: 'vxlan', size: 106496, refCount: 0, usedBy: [], state: 'live' },
    { name: 'udp_tunnel', size: 28672, refCount: 1, usedBy: ['vxlan'], state: 'live' },
  ]);
  // Whatever this host runs parses into numbers and names (an empty file on a kernel without modules).
  let host = '';
  try {
    host = readFileSync('/proc/modules', 'utf8');
  } catch { /* CONFIG_MODULES=n */ }
  for (const m of parseProcModules(host)) {
    t.match(m.name, /^\w+$/);
    t.ok(Number.isInteger(m.size) && m.size > 0, `${m.name} size`);
  }
});

t.test('modules.dep: names, load order deepest first', async (t) => {
  const dep = parseModulesDep([
    'kernel/net/ipv4/udp_tunnel.ko:',
    'kernel/drivers/net/vxlan/vxlan.ko: kernel/net/ipv6/ip6_udp_tunnel.ko kernel/net/ipv4/udp_tunnel.ko',
    'kernel/drivers/net/some-thing.ko.zst: kernel/a.ko kernel/b.ko',
    '',
  ].join('\n'));
  t.same([...dep.keys()], ['udp_tunnel', 'vxlan', 'some_thing']);
  t.same(loadOrder(dep.get('vxlan')!), [
    'kernel/net/ipv4/udp_tunnel.ko', 'kernel/net/ipv6/ip6_udp_tunnel.ko', 'kernel/drivers/net/vxlan/vxlan.ko',
  ]);
  t.same(loadOrder(dep.get('udp_tunnel')!), ['kernel/net/ipv4/udp_tunnel.ko']);
  t.equal(moduleNameOf('kernel/fs/fat/vfat.ko'), 'vfat');
  t.same([...parseBuiltin('kernel/fs/ext4/ext4.ko\nkernel/drivers/block/virtio_blk.ko\n')], ['ext4', 'virtio_blk']);
});
