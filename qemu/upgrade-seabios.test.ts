// The first A/B upgrade under SeaBIOS (legacy BIOS): the same loader and grubenv as under OVMF
// (qemu/upgrade.test.ts tries the refusals, rollback, broken builds and the power cut there).
import t from 'tap';
import { bootDisk, firstUpgrade, freshDisk, manifest, slotLine } from './upgrade-setup.ts';

t.test('seabios: A -> B upgrade, the new system marks itself good', async (t) => {
  const m = await bootDisk(t, freshDisk('seabios'), 'seabios', 256);
  t.equal(await slotLine(m), `A:${manifest.version} running default good | B:-`, 'a fresh disk: A, B empty');
  await firstUpgrade(t, m, 'seabios');
});
