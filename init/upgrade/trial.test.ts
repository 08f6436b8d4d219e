// The trial at a machine's start, on a real boot partition in a temporary directory: an upgrade the machine stopped
// in while writing its slot is reported failed, saying so.
import t from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { createLogger } from '../../machinery/log.ts';
import { GRUBENV_PATH } from '../../machinery/disk/boot-slots.ts';
import { encodeGrubEnv } from '../../machinery/disk/grubenv.ts';
import { BootPartition } from './boot-partition.ts';
import { startTrial } from './trial.ts';
import { RUNTIME_NS, UPGRADE_STATUS_TYPE } from '../../proto/gen/resource-types.ts';

t.test('an upgrade stopped while writing its slot: failed, saying the loader never tried it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trial-'));
  mkdirSync(join(dir, 'boot', 'grub'), { recursive: true });
  writeFileSync(join(dir, GRUBENV_PATH), encodeGrubEnv({ default_slot: 'A', good_slots: 'A' }));
  const boot = new BootPartition(dir, 'A');
  boot.setRecord({
    id: 'cut', healthTimeoutSeconds: 120,
    status: {
      phase: 'writing', source: 'upload', fromVersion: '1.0.0', version: '1.1.0', slot: 'B', bytesReceived: 10,
      bytesWritten: 5, error: '', startedAt: '2026-11-26T00:00:00Z', keyId: 'k',
    },
  });
  const state = new MemoryState();
  const trial = await startTrial({
    state, log: createLogger('test'), owner: 'engine', boot, reboot: () => t.fail('no reboot'),
    slotsChanged: async () => {},
  });
  trial.close();
  const status = state.findSync({ namespace: RUNTIME_NS, type: UPGRADE_STATUS_TYPE, id: 'cut' });
  t.match(status?.spec, {
    phase: 'failed', error: /^the machine stopped while slot B was being written \(version 1\.1\.0; a power cut\?\): /,
  });
  t.match(boot.record(), { status: { phase: 'failed' } }, 'the record says so too');
});
