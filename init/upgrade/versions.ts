// versions: the Version resources (also BootSlots): the running system, and on an installed disk each
// boot slot with what the loader's environment says about it. Published at start and after each change
// of the slots (an upgrade written, a slot marked good, a rollback).
import { arch, release } from 'node:os';
import type { VersionSpec } from '../../proto/gen/spec-types.ts';
import type { State } from '../../cosi/state/state.ts';
import { upsert } from '../../cosi/state/upsert.ts';
import { SLOTS } from '../../machinery/disk/boot-slots.ts';
import { COMMIT, VERSION } from '../../machinery/version.ts';
import type { BootPartition } from './boot-partition.ts';
import { RUNTIME_NS, VERSION_TYPE } from '../../proto/gen/resource-types.ts';
import { RUNNING_VERSION_ID } from '../../machinery/model/singleton-ids.ts';

const running = (): VersionSpec => ({
  version: VERSION, commit: COMMIT, node: process.version, kernel: release(), arch: arch(), slot: '', running: true,
  defaultBoot: false, good: false, trying: false, triesLeft: 0, problem: '',
});

export function versionSpecs(boot: BootPartition | undefined): Map<string, VersionSpec> {
  if (!boot) return new Map([[RUNNING_VERSION_ID, running()]]);
  const loader = boot.loader();
  const { record, problem: recordProblem } = boot.readRecord();
  const bootProblems = [boot.loaderProblem(), recordProblem].filter(Boolean).join('; ');
  return new Map(SLOTS.map((slot) => {
    const info = boot.slot(slot);
    const failed = record?.status.slot === slot && record.status.phase === 'failed' ? record.status.error : '';
    // The running slot's version is the one it was installed or upgraded as (an appliance's own version, which the
    // upgrade bundle and the other slot speak of), its software's own where the slot says none.
    const base: VersionSpec = slot === boot.running
      ? { ...running(), ...(info?.version ? { version: info.version, commit: info.commit } : {}) }
      : { ...running(), version: info?.version ?? '', commit: info?.commit ?? '', node: '', kernel: '', arch: '',
        running: false };
    return [slot, {
      ...base, slot, defaultBoot: loader.defaultSlot === slot, good: loader.good.has(slot),
      trying: loader.trySlot === slot, triesLeft: loader.trySlot === slot ? loader.triesLeft : 0,
      problem: [!info && slot !== boot.running ? 'holds no system' : failed, bootProblems].filter(Boolean).join('; '),
    }];
  }));
}

export async function publishVersions(state: State, owner: string, boot: BootPartition | undefined): Promise<void> {
  for (const [id, spec] of versionSpecs(boot)) {
    await upsert(state, { namespace: RUNTIME_NS, type: VERSION_TYPE, id }, spec, owner);
  }
}
