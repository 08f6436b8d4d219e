// interactive-vm: a VM whose console is the person's terminal (npm start, appliance run): the first Ctrl-C presses
// the ACPI power button (a clean shutdown), a second quits QEMU at once. Resolves with QEMU's exit code.
import type { Vm } from '../../qemu/launch.ts';

/**
 * A terminal's Ctrl-C reaches this process more than once: from the terminal (the whole foreground group) and
 * again relayed by npm's and tsx's wrappers. Signals within a second of the first are that press.
 */
const SAME_PRESS_MS = 1000;

export async function untilPoweredOff(vm: Vm, label: string): Promise<number> {
  let presses = 0;
  let firstPress = 0;
  const onInterrupt = () => {
    if (presses && Date.now() - firstPress < SAME_PRESS_MS) return;
    presses++;
    if (presses === 1) {
      firstPress = Date.now();
      process.stderr.write(`\n[${label}] powering down (ACPI power button); Ctrl-C again to quit QEMU now\n`);
      vm.powerdown(30_000).catch((e: Error) => {
        process.stderr.write(`[${label}] ${e.message}\n`);
        vm.kill();
      });
    } else vm.kill();
  };
  process.on('SIGINT', onInterrupt);
  const exit = await vm.exited;
  process.off('SIGINT', onInterrupt);
  process.stderr.write(`[${label}] QEMU exited (code ${exit.code}${exit.signal ? `, signal ${exit.signal}` : ''})\n`);
  return exit.code ?? 1;
}
