// Whole-system tests: the real image in real QEMU (TCG), read through the serial
// console and driven through QMP.
import t from 'tap';
import { READY_RE, parseReady } from '../init/boot/ready-line.ts';
import { artifacts } from './artifacts.ts';
import { launch, type Vm } from './launch.ts';

const a = artifacts();
const boot = (append: string[]): Vm => {
  const vm = launch({ kernel: a.kernel, initrd: a.initrd, cmdline: a.cmdline, append, memoryMiB: 256 });
  t.teardown(() => vm.kill());
  return vm;
};

t.test('boots to ready in 256 MiB, reaps an orphan, powers off cleanly on the ACPI button', async (t) => {
  const vm = boot(['appliance.test.orphan']);
  const ready = await vm.waitFor(READY_RE, 180_000);
  const figures = parseReady(ready[0]);
  t.ok(figures, 'ready line parses');
  t.ok(figures!.uptime > figures!.initStart, 'ready comes after init start');
  const phases = ['mount', 'cmdline', 'reaper', 'signals', 'hardening'];
  for (const p of phases) t.match(vm.console(), new RegExp(`phase ${p} done in [\\d.]+ms`), `phase ${p} timed`);
  // The kernel's hardening is in place before any plugin starts (the network plugin first, the others later).
  const hardening = vm.console().search(/hardening: \d+ kernel parameters set/);
  // No config waits on this machine: the network plugin alone first (the platform too when one does).
  const waves = vm.console().search(/plugins: network first; [\w, ]+ once those run/);
  t.ok(hardening >= 0 && waves > hardening, 'hardening set, then the network plugin starts first');

  const m = await vm.waitFor(/orphan check: orphan=(\d+) reaped=(\w+) zombies=(\d+)/, 120_000);
  t.equal(m[2], 'yes', `orphan ${m[1]} reaped by PID 1`);
  t.equal(m[3], '0', 'no zombie left');

  const exit = await vm.powerdown(60_000);
  t.ok(exit.clean, 'QEMU exited by itself after the power button');
  t.equal(exit.code, 0, 'QEMU exit code 0');
  t.match(vm.console(), /power button: acpi_event \(generic netlink\)/, 'watched through genetlink');
  t.match(vm.console(), /power button pressed \(acpi_event LNXPWRBN:00\)/);
  t.match(vm.console(), /poweroff requested: ACPI power button/);
  t.match(vm.console(), /unmounted 9 filesystem\(s\)/);
  t.match(vm.console(), /reboot: Power down/);
  t.notMatch(vm.console(), /Kernel panic|Attempted to kill init|uncaught exception/);
});

t.test('SIGTERM from another process powers off cleanly; unmounts first', async (t) => {
  // appliance.test.signal: after ready, a child of PID 1 (our own binary) sends the signal.
  const vm = boot(['appliance.test.signal=SIGTERM']);
  const exit = await vm.exited;
  t.equal(exit.code, 0, 'QEMU exited by itself');
  t.match(vm.console(), /test switch: a child sends SIGTERM to PID 1/);
  t.match(vm.console(), /poweroff requested: signal SIGTERM/);
  t.match(vm.console(), /unmounted \d+ filesystem\(s\)/);
  t.match(vm.console(), /reboot: Power down/);
});

t.test('SIGINT (what ctrl-alt-del becomes) reboots gracefully', async (t) => {
  const vm = boot(['appliance.test.signal=SIGINT']);
  const exit = await vm.exited; // -no-reboot: the guest's reboot ends QEMU
  t.equal(exit.code, 0);
  t.match(vm.console(), /reboot requested: signal SIGINT/);
  t.match(vm.console(), /unmounted \d+ filesystem\(s\)/);
  t.match(vm.console(), /reboot: Restarting system/);
});

t.test('a fatal error counts down and reboots instead of letting the kernel panic', async (t) => {
  const vm = boot(['appliance.test.fatal', 'appliance.fatal_countdown=2']);
  await vm.waitFor(/FATAL: test switch appliance.test.fatal/, 180_000);
  const exit = await vm.exited; // -no-reboot: the guest's reboot ends QEMU
  t.equal(exit.code, 0);
  t.match(vm.console(), /rebooting in 2s[\s\S]*rebooting in 1s/);
  t.match(vm.console(), /reboot requested: fatal: test switch/);
  t.match(vm.console(), /reboot: Restarting system/);
  t.notMatch(vm.console(), /Kernel panic|Attempted to kill init/);
});
