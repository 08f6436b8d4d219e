// test-switches: behaviour only the whole-system tests turn on, through the kernel
// command line (all off by default):
//   appliance.test.orphan  start a child of our own binary that leaves an orphan
//                          behind; report whether PID 1 reaped it and the zombie count
//   appliance.test.fatal   raise a fatal error (the countdown-then-reboot path)
//   appliance.test.signal=SIG  another process sends SIG to PID 1 (the signal handlers)
import type { Cmdline } from '../../machinery/sys/cmdline.ts';
import type { Guard } from './guard.ts';
import type { Logger } from '../../machinery/log.ts';
import { zombieChildrenOf } from '../../machinery/sys/proc-table.ts';
import type { Reaper } from './reaper.ts';

export interface TestSwitchContext {
  cmdline: Cmdline;
  log: Logger;
  reaper: Reaper | undefined;
  guard: Guard;
  flag: (key: string) => boolean;
}

export function runTestSwitches(c: TestSwitchContext): void {
  if (c.flag('appliance.test.orphan') && c.reaper) orphanCheck(c.reaper, c.log);
  if (c.flag('appliance.test.fatal')) c.guard.fatal('test switch appliance.test.fatal');
  const sig = c.cmdline.get('appliance.test.signal');
  if (sig && c.reaper) {
    c.log.info(`test switch: a child sends ${sig} to PID 1`);
    c.reaper.spawn(process.execPath, ['test-signal-init', sig], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
}

function orphanCheck(reaper: Reaper, log: Logger): void {
  const child = reaper.spawn(process.execPath, ['test-orphan-maker', '1500'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.on('exit', (code) => {
    const orphan = Number(/orphan=(\d+)/.exec(out)?.[1]);
    if (!orphan) {
      log.error(`orphan maker exited ${code} without naming its orphan (stdout: ${JSON.stringify(out)})`);
      return;
    }
    log.info(`orphan maker exited ${code}; its child ${orphan} is now ours`);
    let reaped = false;
    reaper.onReap((e) => {
      if (e.pid === orphan) reaped = true;
    });
    const deadline = Date.now() + 30_000;
    const check = () => {
      if (!reaped && Date.now() < deadline) {
        setTimeout(check, 100);
        return;
      }
      // Give the reaper's SIGCHLD handler no excuse: count zombies after it ran.
      const zombies = zombieChildrenOf(process.pid).length;
      log.info(`orphan check: orphan=${orphan} reaped=${reaped ? 'yes' : 'no'} zombies=${zombies}`);
    };
    check();
  });
}
