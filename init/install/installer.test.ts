// The installer as the engine runs it on a host (`serve`): every request is answered with a
// failed InstallStatus that says why, and nothing is looked at or written.
import t from 'tap';
import { newResource } from '../../cosi/resource/resource.ts';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { createLogger } from '../../machinery/log.ts';
import type { InstallStatusSpec } from '../../proto/gen/spec-types.ts';
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import { installRequests } from './installer.ts';
import { CONFIG_NS, INSTALL_REQUEST_TYPE, INSTALL_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

t.test('on a host every request fails at once with the reason, touching nothing', async (t) => {
  const state = new MemoryState();
  const runtime = new ControllerRuntime(state, { log: (name) => createLogger(name) });
  runtime.register(installRequests({
    state, log: createLogger('test'), owner: 'engine',
    machineConfig: () => { throw new Error('a refused install reads no config'); },
    machine: { refuse: 'this engine runs on a host (serve): it installs nothing' },
  }));
  runtime.start();
  t.teardown(() => runtime.stop());
  await runtime.watching();
  await state.create(newResource({ namespace: CONFIG_NS, type: INSTALL_REQUEST_TYPE, id: 'x' }, {
    disk: { path: '/dev/sda', model: '', serial: '', size: '' }, wipe: true, reboot: true, source: '',
  }));
  let status: InstallStatusSpec | undefined;
  for (let i = 0; i < 100 && status?.phase !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 20));
    status = state.findSync({ namespace: RUNTIME_NS, type: INSTALL_STATUS_TYPE, id: 'x' })?.spec as InstallStatusSpec;
  }
  t.match(status, {
    phase: 'failed', error: 'refused: this engine runs on a host (serve): it installs nothing', diskTouched: false,
    disk: '',
  });
  t.ok(status?.finishedAt, 'it says when it ended');
});
