// upgrade-steps: what a test asks of a machine around an upgrade (its ready lines again, its slots, why an upgrade
// failed). No builds here: qemu/upgrade-setup.ts makes the versions, and importing it builds them.
import { READY_RE } from '../init/boot/ready-line.ts';
import type { ApiVm } from './api-vm.ts';

/** Waits for the `n`-th ready line on the console, then for the API. */
export async function readyAgain(m: ApiVm, n: number, ms = 300_000): Promise<void> {
  await m.vm.waitFor(READY_RE, ms, n);
  await m.poll(['get', 'versions'], /Version/, 60_000);
}
interface VersionDoc {
  metadata: { id: string }; spec: { version: string; running: boolean; defaultBoot: boolean; good: boolean };
}
/** The Versions; a machine still starting its plugins may be slow to answer once, so it is asked until it does. */
const versions = async (m: ApiVm) => {
  const r = await m.poll(['get', 'versions', '-o', 'json'], /"items"/, 60_000);
  if (r.code !== 0) throw new Error(`cosictl get versions: exit ${r.code}: ${r.err.trim()}`);
  return (JSON.parse(r.out) as { items: VersionDoc[] }).items;
};
/** The slots in one line: `A:0.1.0 running default good | B:-`. */
export const slotLine = async (m: ApiVm) => (await versions(m)).map((v) => `${v.metadata.id}:${v.spec.version || '-'}`
  + `${v.spec.running ? ' running' : ''}${v.spec.defaultBoot ? ' default' : ''}${v.spec.good ? ' good' : ''}`)
  .join(' | ');
/**
 * Why an upgrade failed, as its UpgradeStatus says (JSON: YAML folds a long message over lines); polled, as the
 * machine just booted may take a while to answer on a loaded host. What cosictl said when it never did.
 */
export const upgradeError = async (m: ApiVm, id: string) => {
  const r = await m.poll(['get', 'upgradestatus', id, '-o', 'json'], /"error"/, 60_000);
  return r.code === 0 ? (JSON.parse(r.out) as { spec: { error: string } }).spec.error
    : `(get upgradestatus ${id}: exit ${r.code} ${r.err.trim()})`;
};
export const upgrade = (m: ApiVm, ...args: string[]) => m.run(['upgrade', ...args], undefined, 300_000);
