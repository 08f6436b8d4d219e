// modalias: modules.alias parsed, globs matched as modprobe matches them, and the devices of a
// sysfs tree laid out as the kernel lays it out, each matched to the modules that drive it.
import t from 'tap';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDrivers, readDevices, type DriverIndex } from './device-drivers.ts';
import { AliasIndex, globRegExp, literalPrefix, parseModulesAlias } from './modalias.ts';
import { loadWithDependencies } from './module-index.ts';
import { parseSoftdepPre, softdepPre } from './modules-dep.ts';

t.test('globs: * ? and classes, the rest literal', async (t) => {
  const e1000e = globRegExp('pci:v00008086d000010D3sv*sd*bc*sc*i*');
  t.ok(e1000e.test('pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00'));
  t.notOk(e1000e.test('pci:v00008086d000010D4sv00008086sd00000000bc02sc00i00'));
  t.notOk(e1000e.test('xpci:v00008086d000010D3sv0sd0bc02sc00i00'), 'anchored at the start');
  t.ok(globRegExp('usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*').test('usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00'));
  t.ok(globRegExp('acpi*:PNP0C0[CD]:*').test('acpi:PNP0C0C:'));
  t.notOk(globRegExp('acpi*:PNP0C0[CD]:*').test('acpi:PNP0C0E:'));
  t.ok(globRegExp('x[!ab]').test('xc'));
  t.notOk(globRegExp('x[!ab]').test('xa'));
  t.ok(globRegExp('a?c').test('abc'));
  t.ok(globRegExp('a.b+(c)').test('a.b+(c)'), 'regex characters are literal');
  t.notOk(globRegExp('a.b').test('axb'));
  t.ok(globRegExp('a[b').test('a[b'), 'an unclosed [ is literal');
  t.equal(literalPrefix('pci:v00008086d000010D3sv*sd*'), 'pci:v00008086d000010D3sv');
  t.equal(literalPrefix('acpi*:PNP0C0[CD]:*'), 'acpi');
  t.equal(literalPrefix('x?'), 'x');
  t.equal(literalPrefix('rtnl-link-dummy'), 'rtnl-link-dummy');
});

t.test('modules.alias: parsed; a bad line is named', async (t) => {
  const aliases = parseModulesAlias('# comment\nalias pci:v00008086d000010D3sv*sd*bc*sc*i* e1000e\n\n'
    + 'alias virtio:d00000008v* virtio_scsi\nalias pci:v*d*sv*sd*bc01sc08i02* nvme\n');
  t.same(aliases.map((a) => a.module), ['e1000e', 'virtio_scsi', 'nvme']);
  t.throws(() => parseModulesAlias('alias x\n'),
    /modules\.alias line 1: "alias x": expected "alias <pattern> <module>"/);
  const index = new AliasIndex([...aliases, { pattern: 'pci:v00008086d000010D3*', module: 'e1000e' }]);
  t.same(index.modulesFor('pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00'), ['e1000e'], 'each module once');
  t.same(index.modulesFor('pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02'), ['nvme'], 'by class');
  t.same(index.modulesFor('pci:v00001AF4d00001041sv00001AF4sd00001100bc02sc00i00'), []);
  t.same(new AliasIndex([{ pattern: '*', module: 'any' }]).modulesFor('acpi:X:'), ['any'], 'a glob may lead');
  t.same(readDevices(join(tmpdir(), 'no-such-sysfs-bus-dir-x'), {}).length, 0, 'no /sys/bus: no devices');
});

t.test('the devices of a sysfs tree, and the modules loaded for those no driver claimed', async (t) => {
  const sys = mkdtempSync(join(tmpdir(), 'sysbus-'));
  const device = (bus: string, name: string, attrs: Record<string, string>, driver?: string) => {
    const dir = join(sys, 'devices-real', bus, name);
    mkdirSync(dir, { recursive: true });
    for (const [k, v] of Object.entries(attrs)) writeFileSync(join(dir, k), `${v}\n`);
    if (driver) symlinkSync(join('../../../bus', bus, 'drivers', driver), join(dir, 'driver'));
    mkdirSync(join(sys, 'bus', bus, 'devices'), { recursive: true });
    symlinkSync(dir, join(sys, 'bus', bus, 'devices', name));
  };
  device('pci', '0000:00:02.0', {
    modalias: 'pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00', vendor: '0x8086', device: '0x10d3',
    class: '0x020000',
  });
  device('pci', '0000:00:03.0', { modalias: 'pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02' });
  device('pci', '0000:00:1f.2', { modalias: 'pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01' }, 'ahci');
  device('platform', 'serial8250', { driver_override: '(null)' }); // no modalias: not a device to drive
  mkdirSync(join(sys, 'bus', 'empty')); // a bus without devices/
  const devices = readDevices(join(sys, 'bus'), { ids: true });
  t.same(devices.map((d) => [d.bus, d.name, d.driver ?? null]), [
    ['pci', '0000:00:02.0', null], ['pci', '0000:00:03.0', null], ['pci', '0000:00:1f.2', 'ahci'],
  ]);
  t.same(devices[0]!.ids, { vendor: '8086', device: '10d3', class: '020000' });

  const index: DriverIndex = {
    dir: '/lib/modules/x',
    aliases: new AliasIndex(parseModulesAlias('alias pci:v00008086d000010D3sv*sd*bc*sc*i* e1000e\n'
      + 'alias pci:v*d*sv*sd*bc01sc08i02* nvme\nalias pci:v00008086d00002922sv*sd*bc*sc*i* ahci\n')),
    modules: new Map([
      ['e1000e', { path: 'kernel/e1000e.ko', deps: [] }],
      ['nvme', { path: 'kernel/nvme.ko', deps: ['kernel/nvme-core.ko'] }],
      ['nvme_core', { path: 'kernel/nvme-core.ko', deps: [] }],
      ['ahci', { path: 'kernel/ahci.ko', deps: [] }],
    ]),
  };
  const calls: string[] = [];
  const loader = {
    load: (path: string) => {
      calls.push(path);
      if (path.endsWith('e1000e.ko')) throw Object.assign(new Error('bad'), { code: 'ENOEXEC' });
    },
    unload: () => {},
  };
  const loaded = new Set<string>();
  const r = loadDrivers(devices, index, loader, loaded);
  t.same(calls, ['e1000e.ko', 'nvme-core.ko', 'nvme.ko'].map((f) => `/lib/modules/x/kernel/${f}`),
    'dependencies first; the bound AHCI device asks for nothing');
  t.same(r.loaded, ['nvme_core', 'nvme'].map((module) => ({ module, device: 'pci 0000:00:03.0' })));
  t.equal(r.failed.length, 1);
  t.match(r.failed[0], { module: 'e1000e', device: 'pci 0000:00:02.0', error: /ENOEXEC/ });
  t.same([...loaded], ['nvme_core', 'nvme']);
  calls.length = 0;
  loadDrivers(devices, index, loader, new Set(['e1000e', ...loaded]));
  t.same(calls, [], 'nothing is loaded twice');
});

t.test('soft dependencies: modules.softdep parsed; a pre: module loads first, with its own dependencies', async (t) => {
  t.same(softdepPre('pre: realtek'), ['realtek']);
  t.same(softdepPre('pre: a b-c post: d'), ['a', 'b_c']);
  t.same(softdepPre('post: d'), []);
  t.same([...parseSoftdepPre('softdep r8169 pre: realtek\n# x\nsoftdep m post: z\n')], [['r8169', ['realtek']]]);
  const modules = new Map([
    ['r8169', { path: 'kernel/r8169.ko', deps: ['kernel/libphy.ko'], softPre: ['realtek', 'not_shipped'] }],
    ['realtek', { path: 'kernel/realtek.ko', deps: ['kernel/libphy.ko'] }],
    ['libphy', { path: 'kernel/libphy.ko', deps: [] }],
  ]);
  const calls: string[] = [];
  const loaded = new Set<string>();
  const now = loadWithDependencies(modules.get('r8169')!, '/m', { load: (p) => {
    calls.push(p);
  }, unload: () => {} },
    loaded, '', modules);
  t.same(calls, ['/m/kernel/libphy.ko', '/m/kernel/realtek.ko', '/m/kernel/r8169.ko'], 'realtek before r8169, once');
  t.same(now, ['libphy', 'realtek', 'r8169']);
});
