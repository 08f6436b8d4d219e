// plugin-socket: who may connect. A process the engine did not start is refused with a warning; a plugin that
// connected and exited before its connection was accepted (a shutdown, a restart) is refused without one.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../../native/index.ts';
import { MemoryState } from '../../../cosi/state/memory-state.ts';
import { META_CODECS } from '../../../cosi/remote/meta-codecs.ts';
import type { Logger } from '../../../machinery/log.ts';
import { openPluginSocket } from './plugin-socket.ts';

const dir = mkdtempSync(join(tmpdir(), 'plugin-socket-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const lines: string[] = [];
const log: Logger = {
  info: (m) => lines.push(`INFO ${m}`), warn: (m) => lines.push(`WARN ${m}`), error: (m) => lines.push(`ERROR ${m}`),
  child: () => log,
};
const path = join(dir, 'plugins.sock');
const sock = await openPluginSocket({
  state: new MemoryState(), log, native: native(), service: { codecs: META_CODECS }, path,
  pluginByPid: () => undefined,
});
t.teardown(() => sock.stop());
/** A node that connects to the socket, then waits `ms` (or exits at once: 0) and exits. */
const CONNECT = `require('net').connect(process.argv[1])
  .on('connect', () => setTimeout(() => process.exit(0), +process.argv[2])).on('error', () => process.exit(0));`;
/** Until the socket has said something (10 s at most). */
async function said(): Promise<void> {
  for (const until = Date.now() + 10_000; !lines.length && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('a process the engine did not start: refused, with a warning naming its pid', async (t) => {
  lines.length = 0;
  const c = spawn(process.execPath, ['-e', CONNECT, path, '2000']);
  await said();
  t.same(lines, [`WARN plugin socket: refused pid ${c.pid} (uid ${process.getuid!()}): `
    + 'not a plugin the engine started']);
  c.kill();
});

t.test('a process gone before its connection is accepted: refused, said as a fact', async (t) => {
  lines.length = 0;
  // spawnSync holds this event loop until the child has connected and exited: the accept comes after.
  const c = spawnSync(process.execPath, ['-e', CONNECT, path, '0']);
  t.equal(c.status, 0);
  await said();
  t.same(lines, [`INFO plugin socket: refused pid ${c.pid} (uid ${process.getuid!()}): `
    + 'it has exited since it connected']);
});
