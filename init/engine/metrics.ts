// metrics: the Prometheus text format (version 0.0.4) at GET /metrics over plain HTTP, opt-in: served
// while a MetricsEndpoint (config, admins) names where. Everything is read at scrape time: resources by
// type, plugins (up, restarts), the API (open watches, unary latency per RPC), the log rings, the
// engine's memory and the machine's (/proc).
import { createServer, type Server } from 'node:http';
import type { MemoryState } from '../../cosi/state/memory-state.ts';
import type { Logger } from '../../machinery/log.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import { type MetricsEndpointSpec, type PluginStatusSpec } from '../../machinery/model/runtime-types.ts';
import { readOverview } from '../../machinery/sys/machine-views.ts';
import type { HistogramSet } from '../../cosi/histogram.ts';
import type { ControllerStats } from '../../machinery/model/plugin.ts';
import type { LogBook } from './log/book.ts';
import { CONFIG_NS, METRICS_ENDPOINT_TYPE, PLUGIN_STATUS_TYPE, RUNTIME_NS } from '../../proto/gen/resource-types.ts';

export interface MetricsSources {
  state: MemoryState;
  api(): { watches: number; latency: HistogramSet };
  logs: LogBook;
  /** Each plugin's controllers' figures, as the plugins last printed them. */
  controllers(): { plugin: string; controllers: ControllerStats[] }[];
  /** Where procfs is (tests). */
  proc?: string;
}

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labels = (l: Record<string, string>) => {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escape(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
};

/** One metric family: HELP, TYPE and its samples. */
function family(name: string, type: 'gauge' | 'counter' | 'histogram', help: string,
  samples: { labels?: Record<string, string>; value: number; suffix?: string }[]): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${samples
    .map((s) => `${name}${s.suffix ?? ''}${labels(s.labels ?? {})} ${Number.isFinite(s.value) ? s.value : 'NaN'}\n`)
    .join('')}`;
}

export function renderMetrics(m: MetricsSources): string {
  const byKind = new Map<string, { namespace: string; type: string; n: number }>();
  for (const r of m.state.resourcesWhere(() => true)) {
    const key = `${r.metadata.namespace}\0${r.metadata.type}`;
    const k = byKind.get(key) ?? { namespace: r.metadata.namespace, type: r.metadata.type, n: 0 };
    k.n++;
    byKind.set(key, k);
  }
  const plugins = m.state.listSync({ namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE })
    .map((r) => ({ name: r.metadata.id, spec: r.spec as PluginStatusSpec }));
  const api = m.api();
  const latency = [...api.latency.byLabel].flatMap(([rpc, h]) => [
    ...h.bounds.map((b, i) => ({ suffix: '_bucket', labels: { rpc, le: String(b) }, value: h.counts[i]! })),
    { suffix: '_bucket', labels: { rpc, le: '+Inf' }, value: h.count },
    { suffix: '_sum', labels: { rpc }, value: h.sum }, { suffix: '_count', labels: { rpc }, value: h.count },
  ]);
  const controllers = m.controllers().flatMap((p) => p.controllers.map((c) => ({ ...c, plugin: p.plugin })));
  const reconciles = controllers.flatMap((c) => {
    const l = { plugin: c.plugin, controller: c.name };
    return [
      ...c.buckets.map(([le, n]) => ({ suffix: '_bucket', labels: { ...l, le: String(le) }, value: n })),
      { suffix: '_bucket', labels: { ...l, le: '+Inf' }, value: c.reconciles },
      { suffix: '_sum', labels: l, value: c.seconds }, { suffix: '_count', labels: l, value: c.reconciles },
    ];
  });
  const rings = m.logs.sources({ kernel: false });
  const mem = process.memoryUsage();
  const o = readOverview(m.proc);
  return [
    family('appliance_resources', 'gauge', 'Resources held, by namespace and type.',
      [...byKind.values()].map((k) => ({ labels: { namespace: k.namespace, type: k.type }, value: k.n }))),
    family('appliance_plugin_up', 'gauge', 'Whether each plugin runs (1) or not (0).',
      plugins.map((p) => ({ labels: { plugin: p.name }, value: p.spec.state === 'running' ? 1 : 0 }))),
    family('appliance_plugin_restarts_total', 'counter', 'Times each plugin was started again since boot.',
      plugins.map((p) => ({ labels: { plugin: p.name }, value: p.spec.restarts }))),
    family('appliance_api_watches', 'gauge', 'Watches open on the API.', [{ value: api.watches }]),
    family('appliance_api_request_duration_seconds', 'histogram',
      'How long users\' unary calls took, by RPC (from the request to the answer).', latency),
    family('appliance_controller_reconcile_duration_seconds', 'histogram',
      'How long each controller\'s reconciles took (as its plugin last reported, every 5 s at most).', reconciles),
    family('appliance_controller_errors_total', 'counter', 'Times each controller\'s run failed and was restarted.',
      controllers.map((c) => ({ labels: { plugin: c.plugin, controller: c.name }, value: c.errors }))),
    family('appliance_log_lines_total', 'counter', 'Lines each log source printed since boot.',
      rings.map((s) => ({ labels: { source: s.name }, value: s.lines + s.dropped }))),
    family('appliance_log_dropped_lines_total', 'counter', 'Lines each log ring let go for newer ones.',
      rings.map((s) => ({ labels: { source: s.name }, value: s.dropped }))),
    family('appliance_engine_resident_memory_bytes', 'gauge', 'The engine\'s resident memory.', [{ value: mem.rss }]),
    family('appliance_engine_heap_used_bytes', 'gauge', 'The engine\'s JavaScript heap in use.',
      [{ value: mem.heapUsed }]),
    family('node_memory_MemTotal_bytes', 'gauge', 'The machine\'s memory.', [{ value: o.memoryTotalKib * 1024 }]),
    family('node_memory_MemAvailable_bytes', 'gauge', 'Memory available without swapping.',
      [{ value: o.memoryAvailableKib * 1024 }]),
    family('node_load1', 'gauge', 'The 1-minute load average.', [{ value: o.load1 }]),
    family('node_uptime_seconds', 'gauge', 'Seconds since boot.', [{ value: o.uptimeSeconds }]),
    // node_exporter's name for /proc/vmstat oom_kill; absent when the kernel does not count them.
    o.oomKills === undefined ? '' : family('node_vmstat_oom_kill', 'counter',
      'Processes the kernel\'s OOM killer ended since boot.', [{ value: o.oomKills }]),
  ].join('');
}

/**
 * Serves /metrics while a MetricsEndpoint exists (the first by id), moving when its listen changes; a controller
 * of the engine's (engine-controllers.ts), which stops serving when it stops.
 */
export function metricsEndpoint(o: MetricsSources & { log: Logger; owner: string }): Controller {
  let server: Server | undefined;
  let listening = '';
  const apply = () => {
    const first = o.state.listSync({ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE })[0];
    const want = (first?.spec as MetricsEndpointSpec | undefined)?.listen ?? '';
    if (want === listening) return;
    if (server) {
      server.close();
      server = undefined;
      o.log.info(`metrics: no longer on ${listening}`);
    }
    listening = want;
    if (!want) return;
    const at = want.lastIndexOf(':');
    const host = want.slice(0, at).replace(/^\[|\]$/g, '');
    const s = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      try {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(renderMetrics(o));
      } catch (e) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`);
      }
    });
    s.on('error', (e) => {
      o.log.warn(`metrics: cannot serve on ${want}: ${e.message}`);
    });
    s.listen(Number(want.slice(at + 1)), host, () => o.log.info(`metrics: serving http://${want}/metrics`));
    server = s;
  };
  return {
    name: 'metrics-endpoint', owner: o.owner,
    inputs: () => [{ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE, kind: 'weak' }],
    outputs: () => [],
    async run(ctx) {
      try {
        while (await ctx.next()) apply();
      } finally {
        server?.close();
        server = undefined;
        listening = '';
      }
    },
  };
}
