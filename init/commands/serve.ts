// serve: the engine on a host, without PID 1's duties (no mounts, no reboot). For
// development, the tests and the benchmarks.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native } from '../../native/index.ts';
import { parseCmdline } from '../../machinery/sys/cmdline.ts';
import { startEngine } from '../engine/engine.ts';
import { FAST_BACKOFF } from '../engine/supervisor.ts';
import type { HoldOptions } from '../engine/shutdown-hold.ts';
import type { PowerAction } from '../../machinery/model/runtime-types.ts';
import { fileConfigStore, memoryConfigStore } from '../../machinery/config/saved-config.ts';
import { PLUGINS } from '../../plugins/index.ts';
import { createLogger } from '../../machinery/log.ts';
import { selfCommand } from '../../machinery/sys/self-command.ts';

export const SERVE_HELP = `usage: init serve [options]

Runs the engine (state, COSI API, plugins) on this host without PID 1 duties.
Plugins run in host mode: nothing acts on the host by itself (no DHCP client);
only resources you declare are applied.

options:
  --listen HOST:PORT     COSI API address (default 127.0.0.1:50000; port 0 picks one)
  --plugin-socket PATH   unix socket for plugins (default $TMPDIR/cosi-<pid>/plugins.sock)
  --test-plugins         also run the test-only plugins
  --fast-backoff         restart plugins after 100ms x1.5 (tests)
  --no-plugins           register every type but start no plugin (benchmarks)
  --cmdline STRING       the kernel command line to publish (default: empty; the
                         host's own is never used, so ip= cannot touch host links)
  --state-dir DIR        persist the machine config in DIR (as PID 1 does on the
                         STATE filesystem), and the update poller's metadata in
                         DIR/updates; default: config in memory, updates in $TMPDIR
  --config FILE          apply this machine config before the API serves (with an
                         ApiCertificateAuthority in it, the API requires mutual TLS
                         from the start; without, it is in maintenance mode)
  --payload DIR          an appliance's payload as a boot slot carries it (appliance.json,
                         config.yaml, extension-NAME.squashfs): its extensions declared
                         (serve runs none: their statuses say so), its config applied
                         when none is persisted

A PowerRequest (any action) ends serve as a signal does, after the ShutdownRequest's
holders let go or its grace period is over, as on a machine.
`;

/** What ends serve: a PowerRequest or a signal. */
interface Ending { action: PowerAction; reason: string; hold: HoldOptions }

export async function serve(args: string[]): Promise<number> {
  let listen = '127.0.0.1:50000';
  let pluginSocket = join(tmpdir(), `cosi-${process.pid}`, 'plugins.sock');
  let testPlugins = false;
  let fast = false;
  let noPlugins = false;
  let raw = '';
  let stateDir: string | undefined;
  let configFile: string | undefined;
  let payloadDir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () => {
      const v = args[++i];
      if (!v) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--listen') listen = value();
    else if (a === '--plugin-socket') pluginSocket = value();
    else if (a === '--test-plugins') testPlugins = true;
    else if (a === '--fast-backoff') fast = true;
    else if (a === '--no-plugins') noPlugins = true;
    else if (a === '--cmdline') raw = value();
    else if (a === '--state-dir') stateDir = value();
    else if (a === '--config') configFile = value();
    else if (a === '--payload') payloadDir = value();
    else if (a === '--help') {
      process.stdout.write(SERVE_HELP);
      return 0;
    }
    else {
      process.stderr.write(`serve: unknown option "${a}"\n\n${SERVE_HELP}`);
      return 2;
    }
  }
  const log = createLogger('engine');
  let powerRequest!: (r: Ending) => void;
  const powered = new Promise<Ending>((r) => {
    powerRequest = r;
  });
  const engine = await startEngine({
    onPowerRequest: (action, id, hold) => powerRequest({ action, reason: `API power request "${id}"`, hold }),
    log, native: native(), listen, pluginSocket, startPlugins: !noPlugins, hostMode: true,
    plugins: PLUGINS.filter((p) => testPlugins || !p.testOnly),
    cmdline: { raw, params: parseCmdline(raw) },
    spawn: (a, env) => {
      const c = selfCommand(a);
      return spawn(c.file, c.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    },
    ...(fast ? { backoff: FAST_BACKOFF } : {}),
    configStore: stateDir ? (mkdirSync(stateDir, { recursive: true }), fileConfigStore(stateDir))
      : memoryConfigStore('serve without --state-dir'),
    ...(configFile ? { config: { bytes: readFileSync(configFile), name: configFile } } : {}),
    ...(payloadDir ? { payload: { dir: payloadDir, from: payloadDir } } : {}),
    updatesDir: join(stateDir ?? join(tmpdir(), `cosi-${process.pid}`), 'updates'),
  });
  await engine.setBootStatus({ phase: 'running', ready: true });
  // Machine-readable for whoever started us (tests read the port from it).
  process.stdout.write(`listening port=${engine.api.port}\n`);
  const signalled = new Promise<Ending>((r) => {
    for (const s of ['SIGTERM', 'SIGINT'] as const) {
      process.once(s, () => r({ action: 'poweroff', reason: `signal ${s}`, hold: {} }));
    }
  });
  const end = await Promise.race([powered, signalled]);
  await engine.prepareShutdown(end.action, end.reason, end.hold);
  await engine.stop();
  return 0;
}
