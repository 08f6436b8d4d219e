// build-appliance's refusals that need the system: a kernel module the system's kernel does not ship, and a kernel
// fragment; each before anything is written (qemu/appliance.test.ts builds and boots whole appliances).
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatNamed } from '../formats/index.ts';
import { ApplianceRefused, buildAppliance } from './build-appliance.ts';
import { loadDefinition } from './definition.ts';
import { openSystemKit, writeSystemKit } from './system-kit.ts';

const dir = mkdtempSync(join(tmpdir(), 'build-appliance-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const paths = { vmlinuz: join(dir, 'vmlinuz'), systemImage: join(dir, 'system.squashfs'), stage0: join(dir, 'stage0') };
for (const p of Object.values(paths)) writeFileSync(p, 'a part');
await writeSystemKit(dir, { version: '1', commit: 'c', cmdline: '', topLevelDirs: [], modules: ['dummy', 'nf_tables'],
  paths });
const kit = await openSystemKit(dir);
const key = { privateKey: generateKeyPairSync('ed25519').privateKey, description: 'test' };

async function refusal(kernel: string): Promise<unknown> {
  const file = join(dir, 'appliance.yaml');
  writeFileSync(file, 'apiVersion: appliance.dev/v1alpha1\nkind: Appliance\nname: box\nversion: "1"\n'
    + `kernel: ${kernel}\n`);
  const r = await loadDefinition(file);
  t.same(r.problems, []);
  const outDir = join(dir, 'out');
  const e = await buildAppliance({ definition: r.definition!, system: kit, signingKey: () => key, outDir, epoch: 0,
    formats: [formatNamed('raw')!], progress: () => undefined }).catch((err: unknown) => err);
  t.notOk(existsSync(outDir), 'nothing written');
  return e;
}

t.test('a module the system does not ship, named; one it ships, under either spelling, taken', async (t) => {
  const e = await refusal('{modules: [dummy, nf-tables, wireguard]}');
  t.type(e, ApplianceRefused);
  t.same((e as ApplianceRefused).problems,
    ['kernel.modules: "wireguard": not a module of the system\'s kernel (it ships 2: dummy, nf_tables)']);
});

t.test('a kernel fragment: refused, said why', async (t) => {
  writeFileSync(join(dir, 'extra.config'), 'CONFIG_WIREGUARD=m\n');
  const e = await refusal('{fragment: extra.config}');
  t.match((e as ApplianceRefused).problems, [/^kernel\.fragment: this build ships the system's own kernel only/]);
});
