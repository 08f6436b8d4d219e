// api-vm: the whole-system tests' machine (qemu/api-machine.ts) with tap's hook: when a test fails
// while the machine runs, its telling console lines go to stderr.
import t from 'tap';
import { bootApiMachine, TELLING, type ApiVm, type ApiVmOptions } from './api-machine.ts';
import type { Vm, VmOptions } from './launch.ts';

export { TEST_CA_DOCUMENT, type ApiVm, type ApiVmOptions, type CliResult } from './api-machine.ts';

/**
 * When a test fails while this machine runs, its telling console lines go to stderr, which CI keeps:
 * an assertion alone ("the lease is kept") does not say that the OOM killer ended the network plugin.
 */
function reportConsoleOnFailure(vm: Vm): void {
  t.afterEach((st) => {
    if (st.passing() || vm.process.exitCode !== null || vm.process.signalCode !== null) return;
    reportTellingLines(st.name, vm);
  });
}

/**
 * A machine's telling console lines to stderr, for a test that failed. A subtest that kills its machine in its
 * teardown calls it there: the root's afterEach runs after the kill and skips a machine that has ended.
 */
export function reportTellingLines(test: string, vm: Vm): void {
  const lines = vm.console().split('\n').filter((l) => TELLING.test(l)).slice(-30);
  process.stderr.write(`[${test}] the machine's console, telling lines:\n${lines.join('\n') || '(none)'}\n`);
}

/** bootApiMachine, reporting the console when a test fails. */
/**
 * A live system (booted from an ISO or by PXE) that installs itself: 320 MiB, not 256, while Node 24's processes
 * hold 19 MiB more than Node 20's did: at 256 MiB such a machine writing its 134 MB disk went silent past cosictl's
 * 10 s keepalive (images and images-cloud tests, run side by side). Issue 36's memory levers are to bring it back.
 */
export const LIVE_INSTALL_MIB = 320;

export const bootWithApi = (
  extra: Partial<VmOptions> = {}, addressing: 'static' | 'dhcp' = 'static', o: ApiVmOptions = {},
): Promise<ApiVm> => bootApiMachine(extra, addressing, {
  ...o,
  onLaunch: (vm, run) => {
    reportConsoleOnFailure(vm);
    o.onLaunch?.(vm, run);
  },
});
