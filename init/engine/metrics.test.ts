// The metrics endpoint of the built engine (`appliance serve` with the test plugins), opt-in through a
// MetricsEndpoint, scraped over HTTPS with a reader's certificate (refused without one) or plain HTTP where the
// endpoint says so, and read with Prometheus's own text parser (python3-prometheus-client).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { get as getTls } from 'node:https';
import { createServer } from 'node:net';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe } from './serve-harness.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { CONFIG_NS, METRICS_ENDPOINT_TYPE, PLUGIN_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

const served = await startServe(artifacts().exe, ['--test-plugins']);
t.teardown(() => served.stop());
const admin = served.client();
t.teardown(() => admin.close());

/** A port free now on 127.0.0.1. */
const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
/** A scrape as a reader over HTTPS (`as` another role, or none: no certificate), or plain with `plain`. */
const scrape = (port: number, path = '/metrics', o: { plain?: boolean; as?: 'reader' | 'none' } = {}) =>
  new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const tls = served.tls('reader');
    const client = o.as === 'none' ? { ca: tls.ca } : { ca: tls.ca, cert: tls.cert, key: tls.key };
    (o.plain ? get : getTls)({ host: '127.0.0.1', port, path, ...(o.plain ? {} : client) }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    }).on('error', reject);
  });

const refused = (e: unknown) => (e as { code?: string }).code === 'ECONNREFUSED';

interface Sample { name: string; labels: Record<string, string>; value: number }
interface Family { name: string; type: string; samples: Sample[] }
/** The families as prometheus_client's parser reads them. */
function parse(text: string): Map<string, Family> {
  const out = execFileSync('/usr/bin/python3', ['-c', `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
print(json.dumps([{"name": f.name, "type": f.type, "samples": [
  {"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]}
  for f in text_string_to_metric_families(sys.stdin.read())]))
`], { input: text, encoding: 'utf8' });
  return new Map((JSON.parse(out) as Family[]).map((f) => [f.name, f]));
}
const value = (f: Family | undefined, labels: Record<string, string>) =>
  f?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

t.test('opt-in: nothing listens until a MetricsEndpoint says where; then GET /metrics parses', async (t) => {
  const port = await freePort();
  await t.rejects(scrape(port), { code: 'ECONNREFUSED' }, 'not served by default');
  await admin.create(newResource({ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE, id: 'prom' },
    { listen: `127.0.0.1:${port}` }));
  for (let i = 0; i < 100; i++) {
    try {
      await scrape(port);
      break;
    } catch (e) {
      if (!refused(e)) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  // The crash-looping plugin has crashed and printed by now.
  for (let i = 0; i < 100; i++) {
    const s = (await admin.get({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: 'test-crasher' })).spec as
      { restarts: number };
    if (s.restarts >= 1) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Some calls for the latency histogram, and a watch open for the gauge.
  for (let i = 0; i < 5; i++) await admin.get({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE, id: 'network' });
  const w = await admin.watch({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE }, {}, () => {});
  t.teardown(() => w.close());
  const r = await scrape(port);
  t.equal(r.status, 200);
  t.equal(r.type, 'text/plain; version=0.0.4; charset=utf-8');
  const m = parse(r.body);
  const plugins = await admin.list({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE });
  t.equal(value(m.get('appliance_resources'), { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE }), plugins.length,
    'resources by type: as many PluginStatuses as the API lists');
  t.equal(m.get('appliance_plugin_up')?.type, 'gauge');
  t.equal(value(m.get('appliance_plugin_up'), { plugin: 'test-crasher' }), 0, 'the crash-looping plugin is down');
  t.ok((value(m.get('appliance_plugin_restarts'), { plugin: 'test-crasher' }) ?? 0) >= 1, 'and restarted');
  t.ok((value(m.get('appliance_api_watches'), {}) ?? 0) >= 1, 'the open watch');
  const latency = m.get('appliance_api_request_duration_seconds');
  t.equal(latency?.type, 'histogram');
  t.ok((value(latency, { rpc: 'State/Get' }) ?? 0) >= 0, 'buckets for State/Get');
  t.ok((latency?.samples.find((s) => s.name.endsWith('_count') && s.labels.rpc === 'State/Get')?.value ?? 0) >= 5,
    'at least the five Gets counted');
  t.ok((value(m.get('appliance_log_lines'), { source: 'test-crasher' }) ?? 0) >= 1, 'log lines by source');
  t.ok((value(m.get('appliance_engine_resident_memory_bytes'), {}) ?? 0) > 10e6, 'the engine\'s memory');
  t.ok((value(m.get('node_memory_MemTotal_bytes'), {}) ?? 0) > 100e6, 'the machine\'s memory');
  t.equal((await scrape(port, '/other')).status, 404);
  const anonymous = await scrape(port, '/metrics', { as: 'none' });
  t.equal(anonymous.status, 403, 'no client certificate: refused');
  t.match(anonymous.body, /requires a client certificate/);
  await t.rejects(scrape(port, '/metrics', { plain: true }), 'not plain HTTP');
  t.equal(value(m.get('appliance_info'), {}), 1);
  t.match(m.get('appliance_info')?.samples[0]?.labels, { version: /./, update_state: 'none' },
    'what runs, and no update policy');
  t.equal(m.get('appliance_healthy')?.type, 'gauge');
  // Reconciles, as the plugins report them (every 5 s at most): test-reader reconciles on each TestFileRead.
  await admin.create(newResource({ namespace: RUNTIME_NS, type: 'TestFileReads.test.appliance.dev', id: 'm' },
    { path: '/proc/self/status' }));
  let latest = new Map<string, Family>();
  let reconciled: Family | undefined;
  for (let i = 0; i < 150; i++) {
    latest = parse((await scrape(port)).body);
    reconciled = latest.get('appliance_controller_reconcile_duration_seconds');
    const of = (c: string) => reconciled?.samples.find((s) => s.name.endsWith('_count') && s.labels.controller === c);
    if ((of('test-reader')?.value ?? 0) >= 2 && of('link-spec')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const count = (controller: string) => reconciled?.samples
    .find((s) => s.name.endsWith('_count') && s.labels.controller === controller)?.value;
  t.ok((count('test-reader') ?? 0) >= 2, `test-reader reconciled at start and for the read: ${count('test-reader')}`);
  t.equal(reconciled?.samples.find((s) => s.labels.controller === 'test-reader')?.labels.plugin, 'test-reader');
  t.ok(count('link-spec') !== undefined, 'the network plugin\'s controllers report too');
  t.equal(value(latest.get('appliance_controller_errors'), { controller: 'link-spec' }), 0, 'no errors, counted');
  await admin.destroy({ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE, id: 'prom' });
  for (let i = 0; i < 50; i++) {
    try {
      await scrape(port);
      await new Promise((r) => setTimeout(r, 100));
    } catch (e) {
      if (!refused(e) && (e as { code?: string }).code !== 'ECONNRESET') throw e; // closing, or closed
      break;
    }
  }
  await t.rejects(scrape(port), { code: 'ECONNREFUSED' }, 'removed: no longer served');
});

t.test('plain: true serves plain HTTP, to anyone', async (t) => {
  const port = await freePort();
  await admin.create(newResource({ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE, id: 'plain' },
    { listen: `127.0.0.1:${port}`, plain: true }));
  t.teardown(() => admin.destroy({ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE, id: 'plain' }));
  let r: { status: number } | undefined;
  for (let i = 0; i < 100 && !r; i++) {
    r = await scrape(port, '/metrics', { plain: true }).catch(async (e) => {
      if (!refused(e)) throw e;
      await new Promise((res) => setTimeout(res, 100));
      return undefined;
    });
  }
  t.equal(r?.status, 200);
});
