// metrics: the Prometheus text format (version 0.0.4) at GET /metrics, opt-in: served while a MetricsEndpoint
// (config, admins) names where. Over HTTPS with the API's certificate and its client check (a certificate of the API's
// CA naming a role: a fleet's Prometheus scrapes with a reader's), plain HTTP only where the endpoint says `plain`.
// Everything is read at scrape time: what runs (appliance_info: version, slot, update state), health, the update
// poller's view, resources by type, plugins (up, restarts), the API (open watches, unary latency per RPC), the log
// rings, the engine's memory and the machine's (/proc).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { ApiTls } from './api/front-door.ts';
import { callerOfConnection } from './api/caller.ts';
import type { HealthStatusSpec, UpdateStatusSpec, VersionSpec } from '../../proto/gen/spec-types.ts';
import type { MemoryState } from '../../cosi/state/memory-state.ts';
import type { Logger } from '../../machinery/log.ts';
import type { Controller } from '../../cosi/controller/contract.ts';
import { type MetricsEndpointSpec, type PluginStatusSpec } from '../../machinery/model/runtime-types.ts';
import { readOverview } from '../../machinery/sys/machine-views.ts';
import type { HistogramSet } from '../../cosi/histogram.ts';
import type { ControllerStats } from '../../machinery/model/plugin.ts';
import type { LogBook } from './log/book.ts';
import {
  API_CERTIFICATE_STATUS_TYPE, CONFIG_NS, HEALTH_STATUS_TYPE, METRICS_ENDPOINT_TYPE, PLUGIN_STATUS_TYPE, RUNTIME_NS,
  SECURITY_NS, UPDATE_STATUS_TYPE, VERSION_TYPE,
} from '../../proto/gen/resource-types.ts';

export interface MetricsSources {
  state: MemoryState;
  api(): { watches: number; latency: HistogramSet };
  logs: LogBook;
  /** Each plugin's controllers' figures, as the plugins last printed them. */
  controllers(): { plugin: string; controllers: ControllerStats[] }[];
  /** Where procfs is (tests). */
  proc?: string;
}

/** What runs, its health and where its updates stand: the families a fleet view is made of. */
function fleetFamilies(m: MetricsSources): string {
  const versions = m.state.listSync({ namespace: RUNTIME_NS, type: VERSION_TYPE });
  const running = versions.find((v) => (v.spec as VersionSpec).running) ?? versions[0];
  const health = m.state.listSync({ namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE })[0]?.spec as
    HealthStatusSpec | undefined;
  const update = m.state.listSync({ namespace: RUNTIME_NS, type: UPDATE_STATUS_TYPE })[0]?.spec as
    UpdateStatusSpec | undefined;
  const time = (iso: string | undefined) => (iso ? Date.parse(iso) / 1000 : NaN);
  return [
    family('appliance_info', 'gauge', 'What runs: its version, boot slot and update state (always 1).', [{ value: 1,
      labels: { version: (running?.spec as VersionSpec | undefined)?.version ?? '', slot: running?.metadata.id ?? '',
        update_state: update?.state ?? 'none' } }]),
    family('appliance_healthy', 'gauge', 'Whether every health check holds (1) or not (0).',
      [{ value: health?.healthy ? 1 : 0 }]),
    family('appliance_health_check_ok', 'gauge', 'Each health check: holds (1) or not (0).',
      (health?.checks ?? []).map((c) => ({ labels: { check: c.name }, value: c.ok ? 1 : 0 }))),
    ...update ? [
      family('appliance_update_offered_info', 'gauge', 'The version the update channel offers (always 1).',
        [{ labels: { channel: update.channel, version: update.offeredVersion }, value: 1 }]),
      family('appliance_update_wave', 'gauge', 'This machine\'s wave for the offered release.',
        [{ value: update.wave }]),
      family('appliance_update_wave_opens_timestamp_seconds', 'gauge', 'When this machine\'s wave lets it upgrade.',
        [{ value: time(update.waveOpens) }]),
      family('appliance_update_last_check_timestamp_seconds', 'gauge', 'The last poll of the update repository.',
        [{ value: time(update.lastCheck) }]),
      family('appliance_update_error', 'gauge', 'Whether the last poll was refused or failed (1) or not (0).',
        [{ value: update.state === 'error' ? 1 : 0 }]),
      family('appliance_update_metadata_bytes', 'gauge', 'Bytes of metadata the last poll fetched.',
        [{ value: update.metadataBytes }]),
      family('appliance_update_bundle_bytes_total', 'counter', 'Bytes of release bundles fetched since boot.',
        [{ value: update.bundleBytes }]),
      family('appliance_update_failed_versions', 'gauge', 'Versions whose try failed here (never taken again).',
        [{ value: update.failedVersions?.length ?? 0 }]),
    ] : [],
  ].join('');
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
    fleetFamilies(m),
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

/** Answers one request: the metrics for GET /metrics, 404 for the rest. */
function answer(o: MetricsSources, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
    return;
  }
  try {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(renderMetrics(o));
  } catch (e) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`);
  }
}

/**
 * Serves /metrics while a MetricsEndpoint exists (the first by id), moving when its listen changes; over HTTPS with the
 * API's certificate (taken again when it is issued again) unless the endpoint says plain; a controller of the
 * engine's (engine-controllers.ts), which stops serving when it stops.
 */
export function metricsEndpoint(o: MetricsSources & { log: Logger; owner: string; tls: () => ApiTls }): Controller {
  let server: Server | TlsServer | undefined;
  let serving = '';
  let tlsServed = '';
  let warned = '';
  const stop = () => {
    server?.close();
    server = undefined;
    if (serving) o.log.info(`metrics: no longer on ${serving}`);
    serving = '';
  };
  const apply = () => {
    const first = o.state.listSync({ namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE })[0];
    const spec = first?.spec as MetricsEndpointSpec | undefined;
    const tls = o.tls();
    const secured = spec && !spec.plain;
    if (secured && tls.mode === 'maintenance') {
      stop();
      if (warned !== spec.listen) {
        o.log.warn(`metrics: the API has no CA (maintenance mode): no client can be checked, so ${spec.listen} `
          + 'serves nothing until one is declared (a MetricsEndpoint with plain: true serves plain HTTP)');
      }
      warned = spec.listen;
      return;
    }
    warned = '';
    const want = spec ? `${spec.plain ? 'http' : 'https'}://${spec.listen}` : '';
    const material = JSON.stringify([tls.certificate, tls.clientCAs]);
    if (want === serving) {
      // The API's certificate issued again (a new CA, a new name): the next handshakes use it.
      if (secured && material !== tlsServed && server && 'setSecureContext' in server) {
        server.setSecureContext({ cert: tls.certificate, key: tls.key, ca: tls.clientCAs });
        tlsServed = material;
      }
      return;
    }
    stop();
    if (!spec) return;
    const listen = spec.listen;
    const at = listen.lastIndexOf(':');
    const host = listen.slice(0, at).replace(/^\[|\]$/g, '');
    const s = spec.plain ? createServer((req, res) => answer(o, req, res))
      // The handshake lets every client finish (as the API's front door does) so that a refusal is said in words.
      : createTlsServer({ cert: tls.certificate, key: tls.key, ca: tls.clientCAs, requestCert: true,
        rejectUnauthorized: false }, (req, res) => {
        const caller = callerOfConnection(req.socket as TLSSocket);
        if (caller.kind !== 'user') {
          res.writeHead(403, { 'content-type': 'text/plain' })
            .end(`${caller.kind === 'refused' ? caller.why : 'refused'}\n`);
          return;
        }
        answer(o, req, res);
      });
    tlsServed = material;
    s.on('error', (e) => {
      o.log.warn(`metrics: cannot serve on ${listen}: ${e.message}`);
    });
    s.listen(Number(listen.slice(at + 1)), host, () => o.log.info(`metrics: serving ${want}/metrics`
      + (spec.plain ? ' (plain: no authentication)' : ' (clients with a certificate of the API\'s CA)')));
    server = s;
    serving = want;
  };
  return {
    name: 'metrics-endpoint', owner: o.owner,
    inputs: () => [
      { namespace: CONFIG_NS, type: METRICS_ENDPOINT_TYPE, kind: 'weak' },
      // Issued again (a CA declared, a name changed): what HTTPS serves with.
      { namespace: SECURITY_NS, type: API_CERTIFICATE_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => [],
    async run(ctx) {
      try {
        while (await ctx.next()) apply();
      } finally {
        stop();
      }
    },
  };
}
