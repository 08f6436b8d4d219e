// A flood of watches beside a bystander, against the built engine over real mutual TLS: one reader opens 3000 kind
// watches (with the kind's 100 resources each) at once, over 12 connections, while another client on its own
// connection and thread Lists the kind every 20 ms. Every bystander call must end within its 1 s deadline (the
// figures, p50/p99, are printed here and by `npm run bench:state -- --flood`).
import t from 'tap';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe } from './serve-harness.ts';
import { measureWatchFlood } from '../../cosi/conformance/watch-flood.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { percentile } from '../../scripts/lib/stats.ts';
import { MOTD_TYPE } from '../../proto/gen/resource-types.ts';

const served = await startServe(artifacts().exe, ['--no-plugins']);
t.teardown(() => served.stop());

t.test('3000 watches opened at once: the bystander\'s every List ends within its deadline', async (t) => {
  const admin = served.client('admin');
  t.teardown(() => admin.close());
  const kind = { namespace: 'config', type: MOTD_TYPE };
  for (let i = 0; i < 100; i += 25) {
    await Promise.all(Array.from({ length: 25 }, (_, j) =>
      admin.create(newResource({ ...kind, id: `flood-${i + j}` }, { text: `resource ${i + j}` }))));
  }
  const r = await measureWatchFlood({
    address: `127.0.0.1:${served.port}`, tls: served.tls('reader'), kind, bystanderReads: { ...kind, id: 'flood-0' },
    bystanderCall: 'list', bystanderTimeoutMs: 1000,
  });
  const at = (p: number) => percentile(r.latencies, p).toFixed(1);
  t.comment(`bystander List of 100: p50 ${at(50)} ms, p99 ${at(99)} ms, max ${at(100)} ms over `
    + `${r.latencies.length} calls; ${r.opened} watches bootstrapped in ${(r.bootstrappedMs / 1000).toFixed(2)} s`);
  t.equal(r.opened, 3000, `every watch opened (${r.floodErrors.join('; ') || 'no errors'})`);
  t.ok(r.latencies.length >= 5, `the bystander called throughout (${r.latencies.length} calls)`);
  t.same(r.bystanderErrors, [], 'every bystander call ended within 1 s');
});
