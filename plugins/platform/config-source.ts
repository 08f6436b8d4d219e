// config-source: where the machine config comes from. Detects the platform, then asks
// the sources in order (ORDER below) until one has something for this machine:
//   cmdline-inline, cmdline-url, fw-cfg, then the detected platform's own source
//   (nocloud, openstack, ec2 or gce).
// A source that answers "absent" is not asked again; one that fails (timeout, 500,
// garbage) is asked again with a backoff of 1 s doubling to 30 s, while later sources
// are asked meanwhile: the first source in order to answer wins. Sources that need the
// network wait for a default route (DHCP or ip=). Each source's state is a ConfigSource;
// the winner's user data becomes UserData "machine" (the engine applies it), what the
// platform says about the machine PlatformMetadata, and its network PlatformNetwork.
import { sha256Hex } from '../../machinery/sys/sha256.ts';
import { release } from 'node:os';
import type { Controller } from '../../cosi/controller/contract.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { decodeConfigInput } from '../../machinery/config/config-input.ts';
import { userDataFormat } from '../../machinery/config/cloud-init/user-data.ts';
import type { InstanceData } from '../../machinery/config/cloud-init/jinja.ts';
import { type KernelCmdlineSpec } from '../../machinery/model/runtime-types.ts';
import { isPhysical } from '../network/link-config.ts';
import type { ConfigLook } from '../../machinery/model/plugin.ts';
import { type LinkStatusSpec, type RouteSpecStatusSpec } from '../network/types.ts';
import { detectPlatform, type Detected, type PlatformName } from './detect.ts';
import { cmdlineInline, cmdlineUrl } from './sources/cmdline.ts';
import { ec2 } from './sources/ec2.ts';
import { fwCfg } from './sources/fw-cfg.ts';
import { gce } from './sources/gce.ts';
import { nocloud } from './sources/nocloud.ts';
import { openstack } from './sources/openstack.ts';
import { failed, type ConfigSourceDef, type Found, type SourceEnv } from './sources/source.ts';
import { type ConfigSourceSpec, type PlatformMetadataSpec, type UserDataSpec } from './types.ts';
import {
  CONFIG_SOURCE_TYPE, KERNEL_CMDLINE_TYPE, LINK_STATUS_TYPE, NETWORK_NS, PLATFORM_METADATA_TYPE,
  PLATFORM_NETWORK_TYPE, PLATFORM_NS, ROUTE_SPEC_STATUS_TYPE, RUNTIME_NS, USER_DATA_TYPE,
} from '../../proto/gen/resource-types.ts';
import { PLATFORM_ID, USER_DATA_ID } from '../../machinery/model/singleton-ids.ts';

const PLATFORM_SOURCE: Record<PlatformName, ConfigSourceDef | undefined> = {
  metal: undefined, qemu: undefined, nocloud, openstack, aws: ec2, gcp: gce,
};

/** The sources asked on a platform, in order. */
export function sourcesFor(p: PlatformName): ConfigSourceDef[] {
  return [cmdlineInline, cmdlineUrl, fwCfg, ...(PLATFORM_SOURCE[p] ? [PLATFORM_SOURCE[p]] : [])];
}

/**
 * The config source controller's first pass, for PID 1 before it starts the plugins, as far as it goes without the
 * network: the sources that may hold a config are asked in order and the first to find one gives it (the user data
 * the pass would publish: PID 1 applies it at once, so the plugins acting on it start with the first wave). A source
 * that needs the network ahead of it (a URL on the command line before fw_cfg) stops the look: once the network is
 * up the plugin's own pass asks that one first, so the plugin starts first and decides, as before PID 1 looked. A
 * source that found more than user data (a seed's network config, the machine's name or instance) leaves that to the
 * plugin, which then starts first too (`startFirst`). Otherwise whether a source may still hold one and from where:
 * `here` when one of them is read without the network (one that failed: `why`), else `network`; nothing (bare
 * metal, QEMU without fw_cfg, nothing on the command line): the platform plugin starts with the others.
 */
export async function lookForConfig(env: SourceEnv): Promise<ConfigLook> {
  const detected = detectPlatform(env);
  const present = sourcesFor(detected.platform).filter((s) => s.present(env));
  const comes = present.some((s) => !s.network(env)) ? 'here' as const : 'network' as const;
  for (const s of present) {
    if (s.network(env)) return { comes };
    const outcome = await s.fetch(env).catch((e: Error) => failed(e.message));
    if (outcome.kind === 'found') {
      const { platform: _platform, ...meta } = outcome.meta;
      const more = !!outcome.network || Object.values(meta).some((v) => v !== undefined && v !== '');
      return {
        userData: userDataOf(outcome, s.name, outcome.meta.instanceId ?? '', detected.platform),
        ...(more ? { startFirst: true } : {}),
      };
    }
    if (outcome.kind === 'failed') return { comes: 'here', why: `${s.name}: ${outcome.message}` };
  }
  return {};
}

const DEFAULT_ROUTES = new Set(['0.0.0.0/0', '::/0']);
export const BACKOFF_MS = { first: 1000, max: 30_000 };
const backoff = (attempts: number) => Math.min(BACKOFF_MS.max, BACKOFF_MS.first * 2 ** (attempts - 1));

export interface ConfigSourceOptions {
  /** The machine as the sources see it, from the command line and the first physical link's MAC. */
  env(params: Record<string, string>, mac: string): SourceEnv;
  now?: () => number;
}

interface Tried { state: ConfigSourceSpec['state']; attempts: number; nextAt: number; message: string }

/** cloud-init's instance data for Jinja user data: its `v1` names (dashed ones too) and the raw meta-data. */
export function instanceDataOf(f: Found, platform: string): InstanceData {
  const m = f.meta;
  const v1: Record<string, unknown> = {
    cloud_name: platform, platform, instance_id: m.instanceId ?? '', local_hostname: m.hostname ?? '',
    region: m.region ?? '', availability_zone: m.zone ?? '', machine: process.arch === 'x64' ? 'x86_64' : process.arch,
    kernel_release: release(), distro: 'appliance',
  };
  for (const k of ['cloud_name', 'instance_id', 'local_hostname', 'availability_zone']) {
    v1[k.replace(/_/g, '-')] = v1[k];
  }
  return { v1, ds: { meta_data: f.metaData ?? {} } };
}

/** The user data as the engine takes it: text, or why it cannot be used. */
export function userDataOf(f: Found, source: string, instanceId: string, platform = ''): UserDataSpec {
  const base = { source, instanceId, ignored: f.ignored, instanceData: JSON.stringify(instanceDataOf(f, platform)) };
  if (!f.userData) return { ...base, format: 'empty', content: '', digest: '', problem: '' };
  const d = decodeConfigInput(f.userData);
  if (!d.ok) return { ...base, format: '', content: '', digest: '', problem: d.message };
  return {
    ...base, format: userDataFormat(d.text), content: d.text, problem: '',
    digest: sha256Hex(d.text),
  };
}

export function configSourceController(o: ConfigSourceOptions): Controller {
  const now = o.now ?? Date.now;
  return {
    name: 'config-source',
    inputs: () => [
      { namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: ROUTE_SPEC_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NS, type: LINK_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: () => [CONFIG_SOURCE_TYPE, USER_DATA_TYPE, PLATFORM_METADATA_TYPE, PLATFORM_NETWORK_TYPE]
      .map((type) => ({ type, kind: 'exclusive' as const })),
    async run(ctx) {
      let detected: Detected | undefined;
      let sources: ConfigSourceDef[] = [];
      const tried = new Map<string, Tried>();
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      ctx.signal.addEventListener('abort', () => clearTimeout(timer));
      const report = async (s: ConfigSourceDef, env: SourceEnv, t: Tried) => {
        await ctx.state.put<ConfigSourceSpec>({ namespace: PLATFORM_NS, type: CONFIG_SOURCE_TYPE, id: s.name }, {
          order: sources.indexOf(s) + 1, state: t.state, location: s.location(env), message: t.message,
          attempts: t.attempts, updated: new Date(now()).toISOString(),
        });
      };
      while (await ctx.next()) {
        if (done) continue;
        const cmdline = await ctx.state.find({ namespace: RUNTIME_NS, type: KERNEL_CMDLINE_TYPE, id: 'current' });
        if (!cmdline) continue;
        const links = await ctx.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE }) as
          Resource<LinkStatusSpec>[];
        const mac = links.filter((l) => isPhysical(l.spec))
          .sort((a, b) => a.spec.index - b.spec.index)[0]?.spec.mac ?? '';
        const env = o.env((cmdline.spec as KernelCmdlineSpec).params ?? {}, mac);
        if (!detected) {
          detected = detectPlatform(env);
          sources = sourcesFor(detected.platform);
          ctx.log.info(`platform ${detected.platform} (${detected.by}); config sources: `
            + sources.map((s) => s.name).join(', '));
          for (const s of sources) {
            tried.set(s.name, { state: 'pending', attempts: 0, nextAt: 0, message: 'not asked yet' });
          }
          // Written together (in flight at once, not one after another): the config waits for them.
          await Promise.all([putMetadata(ctx, { platform: detected.platform, detectedBy: detected.by }),
            ...sources.map((s) => report(s, env, tried.get(s.name)!))]);
        }
        const routes = await ctx.state.list({ namespace: NETWORK_NS, type: ROUTE_SPEC_STATUS_TYPE }) as
          Resource<RouteSpecStatusSpec>[];
        const networkUp = routes.some((r) => r.spec.state === 'applied' && DEFAULT_ROUTES.has(r.spec.destination));
        let wake = Infinity;
        for (const s of sources) {
          const t = tried.get(s.name)!;
          if (t.state === 'absent') continue;
          if (s.network(env) && !networkUp) {
            if (t.state !== 'waiting') {
              Object.assign(t, { state: 'waiting', message: 'waiting for the network (a default route)' });
              await report(s, env, t);
            }
            continue;
          }
          if (t.nextAt > now()) {
            wake = Math.min(wake, t.nextAt);
            continue;
          }
          t.attempts++;
          // A source that throws (an unreadable seed, a file over its bound) failed like any other: asked again.
          const outcome = await s.fetch(env).catch((e: Error) => failed(e.message));
          if (outcome.kind === 'found') {
            Object.assign(t, { state: 'used', message: outcome.message });
            const skipped = sources.filter((other) => other !== s && tried.get(other.name)!.state !== 'absent');
            const why = `not needed: ${s.name} gave the config`;
            for (const other of skipped) Object.assign(tried.get(other.name)!, { state: 'skipped', message: why });
            // The sources' states before the config (whoever sees it applied sees which source gave it), written
            // together: in flight at once, not one after another through an engine busy with starting plugins.
            await Promise.all([s, ...skipped].map((x) => report(x, env, tried.get(x.name)!)));
            await publish(ctx, s.name, detected, outcome);
            ctx.log.info(`config source ${s.name}: ${outcome.message}`);
            done = true;
            break;
          }
          if (outcome.kind === 'absent') {
            Object.assign(t, { state: 'absent', message: outcome.message });
          } else {
            const delay = backoff(t.attempts);
            Object.assign(t, { state: 'failed', nextAt: now() + delay,
              message: `${outcome.message}; asked again in ${Math.round(delay / 1000)} s` });
            wake = Math.min(wake, t.nextAt);
            ctx.log.warn(`config source ${s.name}: ${t.message}`);
          }
          await report(s, env, t);
        }
        if (done) continue;
        if ([...tried.values()].every((t) => t.state === 'absent')) {
          done = true;
          ctx.log.info('no config source has a config for this machine: it waits for one over the API');
        } else if (wake !== Infinity) {
          clearTimeout(timer);
          timer = setTimeout(() => ctx.requestReconcile(), Math.max(0, wake - now()));
        }
      }
      clearTimeout(timer);
    },
  };
}

type Ctx = Parameters<Controller['run']>[0];

async function putMetadata(ctx: Ctx, m: Partial<PlatformMetadataSpec>): Promise<void> {
  const p = { namespace: PLATFORM_NS, type: PLATFORM_METADATA_TYPE, id: PLATFORM_ID };
  const cur = (await ctx.state.find(p))?.spec as PlatformMetadataSpec | undefined;
  const spec: PlatformMetadataSpec = {
    platform: '', detectedBy: '', instanceId: '', hostname: '', region: '', zone: '', instanceType: '',
    ...cur, ...Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined && v !== '')),
  };
  await ctx.state.put(p, spec);
}

async function publish(ctx: Ctx, source: string, detected: Detected, f: Found): Promise<void> {
  // fw_cfg says "qemu" but the detected platform stands (a nocloud machine may also have fw_cfg).
  const { platform: _ignored, ...meta } = f.meta;
  await putMetadata(ctx, { ...meta, platform: detected.platform });
  const instanceId = f.meta.instanceId ?? '';
  if (f.network) {
    await ctx.state.put({ namespace: PLATFORM_NS, type: PLATFORM_NETWORK_TYPE, id: PLATFORM_ID }, {
      interfaces: [], nameservers: [], searchDomains: [], timeServers: [], ignored: [], ...f.network,
    });
  }
  await ctx.state.put({ namespace: PLATFORM_NS, type: USER_DATA_TYPE, id: USER_DATA_ID },
    userDataOf(f, source, instanceId, detected.platform));
}
