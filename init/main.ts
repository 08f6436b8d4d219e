// main: the single executable is multi-call. As PID 1 it boots the system;
// otherwise the first argument names a command.
import { runPid1 } from './boot/pid1.ts';
import { testOrphanMaker, testSignalInit, testSleep } from './commands/test-orphan-maker.ts';
import { COMMIT, VERSION } from '../machinery/version.ts';
import { commandArgs } from '../machinery/sys/argv.ts';

const HELP = `usage: init [command] [args]

As PID 1 (the kernel's init) this program boots the appliance: it mounts the
pseudo filesystems, reaps orphans, handles power events and reports readiness.

commands:
  version                 print version and build information as JSON
  serve [--help]          run the engine (state, COSI API, plugins) on a host
  plugin NAME             run a built-in plugin (the engine starts these)
  extension-exec          become an extension's program, confined (the engine starts these)
  help, --help            this text
  test-orphan-maker [ms]  (tests) start a grandchild that outlives us by ms
  test-sleep [ms]         (tests) sleep ms milliseconds, then exit 0
  test-signal-init [SIG]  (tests) send SIG (default SIGTERM) to PID 1
  test-confine-probe P    (tests) confine as plugin P, try mount(2), print the outcome
`;

async function main(args: string[]): Promise<number> {
  if (process.pid === 1) {
    await runPid1();
    return -1;
  }
  const [cmd = 'help', ...rest] = args;
  switch (cmd) {
    case 'version':
      process.stdout.write(JSON.stringify({ version: VERSION, commit: COMMIT, node: process.version }) + '\n');
      return 0;
    case 'help': case '--help': case '-h':
      process.stdout.write(HELP);
      return 0;
    // Loaded on demand: they pull in the API stack, which PID 1 loads only in its api phase.
    case 'serve': return (await import('./commands/serve.ts')).serve(rest);
    case 'plugin': return (await import('./commands/plugin.ts')).plugin(rest);
    case 'extension-exec': return (await import('./commands/extension-exec.ts')).extensionExec();
    case 'test-orphan-maker': return testOrphanMaker(rest);
    case 'test-sleep': return testSleep(rest);
    case 'test-signal-init': return testSignalInit(rest);
    case 'test-confine-probe': return (await import('./commands/test-confine-probe.ts')).testConfineProbe(rest);
    default:
      process.stderr.write(`init: unknown command "${cmd}"\n\n${HELP}`);
      return 2;
  }
}

main(commandArgs()).then(
  (code) => { if (code >= 0) process.exitCode = code; },
  (e: Error) => {
    process.stderr.write(`init: ${e.message}\n`);
    process.exitCode = 1;
  },
);
