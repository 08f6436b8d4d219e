// health: whether the machine has what a ready machine must have, from the Health resource the engine
// keeps (init/engine/health.ts): each check and why it fails; --wait follows it until it holds.
import type { HealthStatusSpec } from '../../proto/gen/spec-types.ts';
import { flag, noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import { parseDuration } from '../duration.ts';
import { EXIT } from '../errors.ts';
import { followStatus } from '../follow-status.ts';
import { HEALTH_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';
import { HEALTH_ID } from '../../machinery/model/singleton-ids.ts';

export const HEALTH_HELP = `usage: cosictl health [--wait DURATION]

Checks what a ready machine must have: the API serves, every plugin runs, the machine config
is applied, each configured link carries its addresses, the clock is synced when time servers
are configured, every declared mount is mounted, every critical extension runs (and has not
restarted 3 times). Prints each check, and why a failing one fails; the extensions check also
lists each extension and its phase. (A system tried after an upgrade is kept on all of them
but the clock.)

flags:
      --wait DURATION   wait until the machine is healthy (e.g. 2m), printing what still fails
                        as it changes; a machine whose API does not answer yet is waited for too

exit codes: 0 healthy, 1 not healthy (each failing check named; with --wait: not within
DURATION), 5 unreachable.
`;

const report = (h: HealthStatusSpec) =>
  (h.checks ?? []).map((c) => `${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}${c.message ? `: ${c.message}` : ''}\n`).join('');

const failing = (h: HealthStatusSpec) => (h.checks ?? []).filter((c) => !c.ok).map((c) => `${c.name}: ${c.message}`);

export const healthCommand: Command = {
  name: 'health',
  summary: 'health [--wait 2m]     the machine\'s health checks; exit 1 naming each failing one',
  help: HEALTH_HELP,
  flags: ['wait'],
  fanOut: true,
  async run({ p, out, err, session }) {
    noArguments('health', p.positional);
    const wait = flag(p, 'wait');
    const waitSeconds = wait === undefined ? undefined : parseDuration('wait', wait);
    const until = waitSeconds === undefined ? undefined : Date.now() + waitSeconds * 1000;
    // Right after a boot the API may not answer yet (its forward reaches the guest once the network is up).
    const s = await session(until === undefined ? undefined : { until, progress: (why) => err(`waiting: ${why}\n`) });
    const pointer = { namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID };
    let health = (await s.state.get(pointer)).spec as HealthStatusSpec;
    if (!health.healthy && until !== undefined) {
      let shown = '';
      const progress = (h: HealthStatusSpec) => {
        const now = failing(h).join('; ');
        if (now && now !== shown) err(`waiting: ${now}\n`);
        shown = now;
      };
      progress(health);
      const follow = await followStatus<HealthStatusSpec>(s, pointer, 'the machine was healthy', (h) => {
        health = h;
        progress(h);
        return h.healthy;
      });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, until - Date.now()));
      });
      try {
        if (await Promise.race([follow.ended, late]) === 'late') {
          err(`not healthy within ${wait}\n`);
        }
      } finally {
        clearTimeout(timer);
        follow.close();
      }
      // A change between the get and the watch's start is in the watch's first event; read once more to be sure.
      health = (await s.state.get(pointer)).spec as HealthStatusSpec;
    }
    out(report(health));
    if (health.healthy) return EXIT.ok;
    err(`not healthy: ${failing(health).join('; ')}\n`);
    return EXIT.failed;
  },
};
