// A test pause stops the process for good at a named step and says so first; at a step not named it returns.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testPause } from './test-pause.ts';

const dir = mkdtempSync(join(tmpdir(), 'test-pause-'));
const cmdline = join(dir, 'cmdline');
writeFileSync(cmdline, 'console=ttyS0 appliance.test.pause=config-save,upgrade-slot-write/cut quiet\n');

t.test('a step not named returns at once', async (t) => {
  testPause('upgrade-slot-write', 'other', cmdline);
  testPause('something-else', undefined, cmdline);
  t.pass('returned');
});

t.test('a named step (or step/id) is said on the console, and the process stops there', async (t) => {
  for (const [step, id, line] of [['config-save', '', 'config-save'], ['upgrade-slot-write', 'cut',
    'upgrade-slot-write/cut']] as const) {
    const code = `import { testPause } from ${JSON.stringify(new URL('./test-pause.ts', import.meta.url).href)};
      testPause(${JSON.stringify(step)}, ${id ? JSON.stringify(id) : 'undefined'}, ${JSON.stringify(cmdline)});
      console.log('past the pause');`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await new Promise<void>((resolve) => {
      const seen = setInterval(() => {
        if (out.includes('PAUSE')) {
          clearInterval(seen);
          resolve();
        }
      }, 50);
    });
    await new Promise((r) => setTimeout(r, 500));
    t.equal(child.exitCode, null, `${line}: still there, stopped`);
    child.kill('SIGKILL');
    t.equal(out, `APPLIANCE TEST PAUSE ${line}\n`, `${line}: said, and nothing after it`);
  }
});
