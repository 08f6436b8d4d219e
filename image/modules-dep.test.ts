// modinfo and modules.dep against real modules: image/fixtures holds dummy.ko and
// ip6_udp_tunnel.ko as built (stripped) from linux-source 6.1.192 by scripts/kernel.ts.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { elfSection, moduleDepends, moduleName, readModinfo } from './modinfo.ts';
import {
  dependencyClosure, modulesAlias, modulesDep, modulesSoftdep, scanModules, type ShippedModule,
} from './modules-dep.ts';

const fixture = (f: string) => new URL(`./fixtures/${f}`, import.meta.url).pathname;

t.test("reads a real module's .modinfo", async (t) => {
  const info = readModinfo(readFileSync(fixture('dummy.ko')), 'dummy.ko');
  t.equal(moduleName(info, 'dummy.ko'), 'dummy');
  t.same(moduleDepends(info), []);
  t.same(info.get('alias'), ['rtnl-link-dummy']);
  t.same(info.get('parmtype'), ['numdummies:int']);
  t.match(info.get('vermagic')?.[0], /^6\.1\.192 SMP mod_unload/);
  t.equal(moduleName(readModinfo(readFileSync(fixture('ip6_udp_tunnel.ko'))), 'x.ko'), 'ip6_udp_tunnel');
});

t.test('refuses what is not a module, naming the file', async (t) => {
  t.throws(() => readModinfo(Buffer.from('#!/bin/sh\n'.padEnd(64)), 'script'), /script: not an ELF file/);
  const elf = readFileSync(process.execPath);
  t.equal(elfSection(elf, '.modinfo'), undefined, 'node has no .modinfo');
  t.throws(() => readModinfo(elf, 'node'), /node: no \.modinfo section \(not a kernel module\)/);
  t.throws(
    () => readModinfo(readFileSync(fixture('dummy.ko')).subarray(0, 2000), 'cut.ko'),
    /cut\.ko: section headers run past the end/,
  );
});

t.test('modules.dep lists every dependency, deepest last', async (t) => {
  const m = (name: string, ...depends: string[]): ShippedModule => ({
    name, path: `kernel/${name}.ko`, depends, aliases: [],
  });
  const mods = [m('a', 'b', 'c'), m('b', 'd'), m('c', 'd'), m('d'), m('e')];
  t.equal(modulesDep(mods), [
    'kernel/a.ko: kernel/c.ko kernel/b.ko kernel/d.ko',
    'kernel/b.ko: kernel/d.ko',
    'kernel/c.ko: kernel/d.ko',
    'kernel/d.ko:',
    'kernel/e.ko:',
  ].join('\n') + '\n');
  // Loading right to left: d, b, c, a: each after everything it needs.
  t.throws(() => dependencyClosure('x', new Map([['x', m('x', 'y')]])), /module x depends on y, which is not shipped/);
  t.throws(
    () => dependencyClosure('p', new Map([['p', m('p', 'q')], ['q', m('q', 'p')]])),
    /circular module dependency: p -> q -> p/,
  );
});

t.test('modules.alias: every alias of every module, as depmod writes it', async (t) => {
  const shipped = scanModules(new URL('./fixtures', import.meta.url).pathname);
  t.same(shipped.map((m) => [m.name, m.aliases]), [['dummy', ['rtnl-link-dummy']], ['ip6_udp_tunnel', []]]);
  t.equal(modulesAlias(shipped), 'alias rtnl-link-dummy dummy\n');
  t.equal(modulesAlias([{ name: 'e1000e', path: 'e.ko', depends: [], aliases: ['pci:v00008086d000010D3sv*sd*bc*sc*i*',
    'pci:v00008086d0000105Esv*sd*bc*sc*i*'] }]),
  'alias pci:v00008086d000010D3sv*sd*bc*sc*i* e1000e\nalias pci:v00008086d0000105Esv*sd*bc*sc*i* e1000e\n');
});

t.test('modules.softdep: the pre: modules .modinfo names, as depmod writes them', async (t) => {
  t.equal(modulesSoftdep([
    { name: 'r8169', path: 'r.ko', depends: ['libphy'], aliases: [], softPre: ['realtek'] },
    { name: 'e1000e', path: 'e.ko', depends: [], aliases: [] },
  ]), 'softdep r8169 pre: realtek\n');
  t.equal(modulesSoftdep(scanModules(new URL('./fixtures', import.meta.url).pathname)), '', 'the fixtures have none');
});
