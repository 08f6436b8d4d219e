// health: whether the machine has what a ready machine must have, as one resource (Health "machine",
// runtime) the engine keeps up to date: the API serves, every plugin runs, the machine config is applied,
// each configured link carries its addresses (a DHCP link: the address of a bound lease), the clock is synced
// when time servers are configured, every declared mount is mounted, and every critical extension runs (and has
// not restarted CRITICAL_RESTARTS times; the others are only summed up in the check's message). A system tried
// after an upgrade marks itself good on it (init/upgrade/trial.ts); `cosictl get health` shows each check and
// why it fails. The first time the plugins all run, the first time the network is configured (addresses,
// and the default route a lease brings), and the first time a machine config is applied (by the plugins that act
// on it) are boot milestones: PID 1 prints them for bench:boot.
import type {
  DhcpLeaseSpec, HealthCheck, HealthStatusSpec, MountSpecStatusSpec, PluginStatusSpec, RouteSpecStatusSpec,
  TimeStatusSpec,
} from '../../proto/gen/spec-types.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Controller } from '../../cosi/controller/contract.ts';
import { type ConfigStatusSpec, type ExtensionStatusSpec } from '../../machinery/model/runtime-types.ts';
import { crashLooping } from '../../machinery/model/extension-manifest.ts';
import {
  ADDRESS_SPEC_TYPE, CONFIG_STATUS_TYPE, DHCP_LEASE_TYPE, EXTENSION_STATUS_TYPE, HEALTH_STATUS_TYPE, LINK_STATUS_TYPE,
  MERGED_ADDRESS_SPEC_TYPE, MERGED_DHCP_SPEC_TYPE, MERGED_MOUNT_SPEC_TYPE, MOUNT_SPEC_STATUS_TYPE, NETWORK_NS,
  PLUGIN_STATUS_TYPE, ROUTE_SPEC_STATUS_TYPE, RUNTIME_NS, STORAGE_NS, TIME_NS, TIME_STATUS_TYPE,
} from '../../proto/gen/resource-types.ts';
import { CONFIG_STATUS_ID, HEALTH_ID, TIME_STATUS_ID } from '../../machinery/model/singleton-ids.ts';
import { msSinceStart } from '../../cosi/monotonic.ts';

export interface HealthFacts {
  apiServing: boolean;
  /**
   * The built-in plugins the engine runs (an extension is not the machine's health): one without a status has not
   * started yet.
   */
  expectedPlugins: readonly string[];
  /** The plugins that act on the machine config's resources (serve their types): the config milestone's. */
  configPlugins: readonly string[];
  plugins: { name: string; spec: PluginStatusSpec }[];
  config: ConfigStatusSpec | undefined;
  /** Address (CIDR) by link, as the config asks for them. */
  wantAddresses: { link: string; address: string }[];
  /** Addresses as declared (AddressSpecs of every layer), before any merge: the config milestone wants them. */
  declaredAddresses: { link: string; address: string }[];
  /** Links the config runs DHCP on. */
  dhcpLinks: string[];
  /** Each DHCP client's state and lease, by link. */
  leases: ReadonlyMap<string, Pick<DhcpLeaseSpec, 'state' | 'address' | 'gateway'>>;
  /** Default routes (0.0.0.0/0, ::/0) as applied: their links. */
  defaultRouteLinks: readonly string[];
  /** The addresses each link carries now (IPv6 link-local ones too). */
  linkAddresses: ReadonlyMap<string, readonly string[]>;
  /** The clock: the servers in effect and whether one set it (undefined: no time plugin yet). */
  time?: { servers: readonly string[]; synced: boolean; server?: string };
  /** The mounts declared (merged, by target) and each one's state. */
  declaredMounts: readonly string[];
  mounts: ReadonlyMap<string, { state?: string; error?: string }>;
  /** Each extension as the engine runs it: only a critical one counts, the others are summed up. */
  extensions?: readonly {
    name: string; spec: Pick<ExtensionStatusSpec, 'phase' | 'critical' | 'restarts' | 'error'>;
  }[];
}

export type Milestone = 'plugins' | 'network' | 'config';

/** The addresses check's message on a machine whose config configures no link (yet). */
export const NO_ADDRESSES_CONFIGURED = 'none configured';

const check = (name: string, problems: string[], fine: string): HealthCheck => (
  { name, ok: problems.length === 0, message: problems.length ? problems.join('; ') : fine }
);

/** Whether `link` carries `address` now. */
const onLink = (f: HealthFacts, link: string, address: string) => (f.linkAddresses.get(link) ?? []).includes(address);

export function evaluateHealth(f: HealthFacts): HealthCheck[] {
  // The machine's own plugins: an extension that fails says so in its ExtensionStatus, and must not make the
  // machine unhealthy (an upgrade on trial would roll back for it) unless it is critical (the extensions check).
  const own = new Set(f.expectedPlugins);
  const plugins = f.plugins.filter((p) => own.has(p.name) && p.spec.state !== 'running').map((p) => {
    if (p.spec.state === 'waiting') return `${p.name} waits for the second wave (plugin-waves.ts) before it starts`;
    const exit = p.spec.lastExit;
    const how = exit ? `, last exit ${exit.signal ?? `code ${exit.code ?? '?'}`}` : '';
    return `${p.name} is ${p.spec.state} (${p.spec.restarts} restarts${how})`;
  });
  for (const name of f.expectedPlugins) {
    if (!f.plugins.some((p) => p.name === name)) plugins.push(`${name} has not started`);
  }
  const config = !f.config ? ['no ConfigStatus yet']
    : f.config.state === 'applied' || f.config.state === 'trying' ? []
      : [`the machine config is ${f.config.state}${f.config.message ? `: ${f.config.message}` : ''}`];
  const missing = f.wantAddresses.filter((w) => !onLink(f, w.link, w.address))
    .map((w) => `${w.link} lacks ${w.address}`);
  for (const link of f.dhcpLinks) {
    const lease = f.leases.get(link);
    if (lease?.state !== 'bound' || !lease.address) {
      missing.push(`${link} has no DHCP lease (${lease?.state ?? 'no client yet'})`);
    } else if (!onLink(f, link, lease.address)) {
      missing.push(`${link} lacks ${lease.address} (DHCP)`);
    }
  }
  const links = new Set([...f.wantAddresses.map((w) => w.link), ...f.dhcpLinks]);
  const servers = f.time?.servers ?? [];
  const time = !servers.length || f.time?.synced ? []
    : [`not synced with ${servers.join(', ')} yet`];
  const disks = f.declaredMounts.flatMap((target) => {
    const m = f.mounts.get(target);
    if (m?.state === 'applied') return [];
    return [`${target} is ${m?.state ?? 'not handled yet'}${m?.error ? ` (${m.error})` : ''}`];
  });
  const extensions = f.extensions ?? [];
  const critical = extensions.filter((e) => e.spec.critical).flatMap(({ name, spec: e }) => {
    if (crashLooping(e)) return [`${name} (critical) restarted ${e.restarts} times since it started`];
    if (e.phase === 'running') return [];
    return [`${name} (critical) is ${e.phase}${e.error ? `: ${e.error.split('\n')[0]}` : ''}`];
  });
  const summary = extensions.map(({ name, spec: e }) => `${name} ${e.phase}${e.critical ? ' (critical)' : ''}`)
    .join(', ') || 'none declared';
  return [
    check('api', f.apiServing ? [] : ['the API is not serving'], 'serving'),
    check('plugins', plugins, `${f.plugins.length} running`),
    check('config', config, `applied (${f.config?.resources ?? 0} resources)`),
    check('addresses', missing, links.size ? `on ${[...links].sort().join(', ')}` : NO_ADDRESSES_CONFIGURED),
    check('time', time, servers.length ? `synced from ${f.time?.server ?? servers[0]}` : 'no time server configured'),
    check('disks', disks, f.declaredMounts.length ? `${f.declaredMounts.length} mounted` : 'no mounts declared'),
    check('extensions', critical, summary),
  ];
}

/**
 * The milestones `checks` show reached: plugins, when every plugin runs; network, when the configured
 * links carry their addresses and each lease's gateway is a default route on its link; config, when a
 * machine config of at least one resource (from STATE, a platform source or the API) is applied, not only
 * tried, each plugin that acts on it (serves a type of its resources) runs and every declared address is on its
 * link (a DHCP lease is not waited for). A running plugin has its watches' contents and acts on them as it starts.
 */
export function reachedMilestones(f: HealthFacts, checks: HealthCheck[]): Milestone[] {
  const ok = (name: string) => checks.some((c) => c.name === name && c.ok);
  const reached: Milestone[] = ok('plugins') ? ['plugins'] : [];
  const configured = f.wantAddresses.length + f.dhcpLinks.length > 0;
  const routes = f.dhcpLinks.every((l) => !f.leases.get(l)?.gateway || f.defaultRouteLinks.includes(l));
  if (configured && ok('addresses') && routes) reached.push('network');
  const addressesOn = f.declaredAddresses.every((w) => onLink(f, w.link, w.address));
  const running = (name: string) => f.plugins.some((p) => p.name === name && p.spec.state === 'running');
  const acting = f.configPlugins.every(running);
  if (f.config?.state === 'applied' && f.config.resources > 0 && acting && addressesOn) reached.push('config');
  return reached;
}

const WATCHED = [
  { namespace: RUNTIME_NS, type: PLUGIN_STATUS_TYPE }, { namespace: RUNTIME_NS, type: CONFIG_STATUS_TYPE },
  { namespace: NETWORK_NS, type: LINK_STATUS_TYPE }, { namespace: NETWORK_NS, type: MERGED_ADDRESS_SPEC_TYPE },
  { namespace: NETWORK_NS, type: MERGED_DHCP_SPEC_TYPE }, { namespace: NETWORK_NS, type: DHCP_LEASE_TYPE },
  { namespace: NETWORK_NS, type: ROUTE_SPEC_STATUS_TYPE }, { namespace: NETWORK_NS, type: ADDRESS_SPEC_TYPE },
  { namespace: TIME_NS, type: TIME_STATUS_TYPE }, { namespace: STORAGE_NS, type: MERGED_MOUNT_SPEC_TYPE },
  { namespace: STORAGE_NS, type: MOUNT_SPEC_STATUS_TYPE }, { namespace: RUNTIME_NS, type: EXTENSION_STATUS_TYPE },
] as const;
const DEFAULT_ROUTES = ['0.0.0.0/0', '::/0'];

/**
 * The shortest time between two evaluations: a plugin's start writes many statuses at once, and such a burst is read
 * once per SETTLE_MS at most, its changes together. The first change after a quiet time is read at once: a milestone
 * is seen when it is reached.
 */
const SETTLE_MS = 25;

export interface HealthOptions {
  owner: string;
  /** Asked at each evaluation. */
  apiServing: () => boolean;
  expectedPlugins: readonly string[];
  /** The plugins that act on the machine config's resources, asked at each evaluation (default: every plugin). */
  configPlugins?: () => readonly string[];
  /** Called once per milestone, the first time it is reached (a restart of the controller does not call it again). */
  onMilestone?: (m: Milestone) => void;
}

/** Keeps Health "machine" current from the kinds it reads: a controller of the engine's (engine-controllers.ts). */
export function healthController(o: HealthOptions): Controller {
  const passed = new Set<Milestone>();
  let since = new Date().toISOString();
  let healthy: boolean | undefined;
  return {
    name: 'health', owner: o.owner,
    inputs: () => WATCHED.map((k) => ({ ...k, kind: 'weak' as const })),
    outputs: () => [{ type: HEALTH_STATUS_TYPE, kind: 'exclusive' }],
    async run(ctx) {
      let lastRead = -Infinity;
      while (await ctx.next()) {
        const wait = lastRead + SETTLE_MS - msSinceStart();
        if (wait > 0) await sleep(wait);
        lastRead = msSinceStart();
        const [plugins, configs, links, addresses, dhcp, leases, routes, declared, clocks, mountSpecs, mountStatuses,
          extensions] = await Promise.all(WATCHED.map((k) => ctx.state.list(k)));
        const facts = factsOf(o, {
          plugins: plugins!, configs: configs!, links: links!, addresses: addresses!, dhcp: dhcp!, leases: leases!,
          routes: routes!, declared: declared!, clocks: clocks!, mountSpecs: mountSpecs!, mountStatuses: mountStatuses!,
          extensions: extensions!,
        });
        const checks = evaluateHealth(facts);
        for (const m of reachedMilestones(facts, checks)) {
          if (passed.has(m)) continue;
          passed.add(m);
          o.onMilestone?.(m);
        }
        const now = checks.every((c) => c.ok);
        if (now !== healthy) {
          healthy = now;
          since = new Date().toISOString();
        }
        await ctx.state.put({ namespace: RUNTIME_NS, type: HEALTH_STATUS_TYPE, id: HEALTH_ID },
          { healthy: now, checks, since } satisfies HealthStatusSpec);
      }
    },
  };
}

type Listed = Record<'plugins' | 'configs' | 'links' | 'addresses' | 'dhcp' | 'leases' | 'routes' | 'declared'
  | 'clocks' | 'mountSpecs' | 'mountStatuses' | 'extensions', readonly Resource[]>;

/** The facts the checks read, from the resources of the watched kinds. */
function factsOf(o: HealthOptions, l: Listed): HealthFacts {
  const clock = l.clocks.find((r) => r.metadata.id === TIME_STATUS_ID)?.spec as TimeStatusSpec | undefined;
  return {
    apiServing: o.apiServing(), expectedPlugins: o.expectedPlugins,
    configPlugins: o.configPlugins?.() ?? o.expectedPlugins,
    plugins: l.plugins.map((r) => ({ name: r.metadata.id, spec: r.spec as PluginStatusSpec })),
    config: l.configs.find((r) => r.metadata.id === CONFIG_STATUS_ID)?.spec as ConfigStatusSpec | undefined,
    wantAddresses: l.addresses.map((r) => r.spec as { link: string; address: string }),
    declaredAddresses: l.declared.map((r) => r.spec as { link: string; address: string }),
    dhcpLinks: l.dhcp.map((r) => r.spec as { link?: string; enabled?: boolean })
      .filter((d) => d.enabled !== false && d.link).map((d) => d.link!),
    leases: new Map(l.leases.map((r) => [r.metadata.id, r.spec as DhcpLeaseSpec])),
    defaultRouteLinks: l.routes.map((r) => r.spec as RouteSpecStatusSpec)
      .filter((r) => r.state === 'applied' && DEFAULT_ROUTES.includes(r.destination)).map((r) => r.link),
    linkAddresses: new Map(l.links.map((r) => [r.metadata.id, (r.spec as { addresses?: string[] }).addresses ?? []])),
    ...(clock ? {
      time: { servers: clock.servers ?? [], synced: clock.synced, ...(clock.server ? { server: clock.server } : {}) },
    } : {}),
    declaredMounts: l.mountSpecs.map((r) => r.metadata.id),
    mounts: new Map(l.mountStatuses.map((r) => {
      const m = r.spec as MountSpecStatusSpec;
      return [r.metadata.id, { ...(m.state ? { state: m.state } : {}), ...(m.error ? { error: m.error } : {}) }];
    })),
    extensions: l.extensions.map((r) => ({ name: r.metadata.id, spec: r.spec as ExtensionStatusSpec })),
  };
}
