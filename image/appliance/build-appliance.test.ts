// build-appliance's refusals that need the system: a kernel module the system's kernel does not ship, and a kernel
// fragment's bad lines and settings that did not hold; each before anything is written (qemu/appliance.test.ts
// builds and boots whole appliances).
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatNamed } from '../formats/index.ts';
import { ApplianceRefused, buildAppliance } from './build-appliance.ts';
import { loadDefinition } from './definition.ts';
import { openSystemKit, writeSystemKit } from './system-kit.ts';
import type { KernelBuilder, KernelFragmentRequest } from './kit-with-kernel.ts';
import { KernelConfigRefused } from '../kernel-config.ts';
import { buildKernel } from '../../scripts/kernel.ts';

const dir = mkdtempSync(join(tmpdir(), 'build-appliance-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const paths = {
  vmlinuz: join(dir, 'vmlinuz'), systemImage: join(dir, 'system.squashfs'), stage0: join(dir, 'stage0'),
  kernelConfig: join(dir, 'kernel.config'), kernelFragment: join(dir, 'kernel-fragment.config'),
};
for (const p of Object.values(paths)) writeFileSync(p, 'a part');
writeFileSync(paths.kernelFragment, 'CONFIG_FUTEX=y\n# CONFIG_DEVMEM is not set\n');
await writeSystemKit(dir, { version: '1', commit: 'c', cmdline: '', topLevelDirs: [], modules: ['dummy', 'nf_tables'],
  kernel: { key: 'k', source: 's', release: 'r' }, compression: { compressor: 'zstd', blockSize: '32K' }, paths });
const kit = await openSystemKit(dir);
const key = { privateKey: generateKeyPairSync('ed25519').privateKey, description: 'test' };

async function refusal(kernel: string, kernelBuilder?: KernelBuilder): Promise<unknown> {
  const file = join(dir, 'appliance.yaml');
  writeFileSync(file, 'apiVersion: appliance.dev/v1alpha1\nkind: Appliance\nname: box\nversion: "1"\n'
    + `kernel: ${kernel}\n`);
  const r = await loadDefinition(file);
  t.same(r.problems, []);
  const outDir = join(dir, 'out');
  const e = await buildAppliance({ definition: r.definition!, system: kit, signingKey: () => key, outDir, epoch: 0,
    ...(kernelBuilder ? { kernelBuilder } : {}), formats: [formatNamed('raw')!], progress: () => undefined })
    .catch((err: unknown) => err);
  t.notOk(existsSync(outDir), 'nothing written');
  return e;
}

t.test('a module the system does not ship, named; one it ships, under either spelling, taken', async (t) => {
  const e = await refusal('{modules: [dummy, nf-tables, wireguard]}');
  t.type(e, ApplianceRefused);
  t.same((e as ApplianceRefused).problems,
    ['kernel.modules: "wireguard": not a module of the system\'s kernel (it ships 2: dummy, nf_tables)']);
});

t.test('a kernel fragment: its bad lines and changes to the system\'s settings, before any build', async (t) => {
  writeFileSync(join(dir, 'extra.config'), '# for the VPN\nCONFIG_TUN=m\nTUN=y\n# CONFIG_FUTEX is not set\n');
  let asked = 0;
  const e = await refusal('{fragment: extra.config}', async () => {
    asked++;
    throw new Error('not reached');
  });
  t.type(e, ApplianceRefused);
  t.same((e as ApplianceRefused).problems, [
    'kernel.fragment: extra.config: line 3: not a kernel config line: TUN=y',
    'kernel.fragment: extra.config: line 4: CONFIG_FUTEX off: the system sets CONFIG_FUTEX=y and relies on it',
  ]);
  t.equal(asked, 0, 'no kernel compiled');
});

t.test('a kernel fragment whose settings did not hold once configured: each named', async (t) => {
  writeFileSync(join(dir, 'extra.config'), 'CONFIG_WIREGUARD=m\n');
  let request: KernelFragmentRequest | undefined;
  const e = await refusal('{fragment: extra.config}', async (r) => {
    request = r;
    throw new KernelConfigRefused(r.fragmentFile, ['line 1: CONFIG_WIREGUARD=m: got not set']);
  });
  t.same((e as ApplianceRefused).problems, ['kernel.fragment: extra.config: line 1: CONFIG_WIREGUARD=m: got not set']);
  t.same(request && { ...request, progress: undefined }, {
    base: { key: 'k', config: 'a part' }, systemFragment: 'CONFIG_FUTEX=y\n# CONFIG_DEVMEM is not set\n',
    fragment: 'CONFIG_WIREGUARD=m\n', fragmentFile: 'extra.config', progress: undefined,
  }, 'the system\'s kernel and config, with the fragment');
});

t.test('with a fragment, kernel.modules are checked against the appliance\'s kernel\'s modules', async (t) => {
  const real = await buildKernel(); // a cache hit: the build made it
  writeFileSync(join(dir, 'extra.config'), 'CONFIG_TUN=m\n');
  const e = await refusal('{fragment: extra.config, modules: [dummy, tun]}', async () => real);
  t.match((e as ApplianceRefused).problems,
    [/^kernel\.modules: "tun": not a module of the appliance's kernel \(with its fragment\) \(it ships \d+: .*dummy/]);
});
