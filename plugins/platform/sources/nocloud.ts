// nocloud: cloud-init's NoCloud data source.
//   a volume labelled cidata or CIDATA (vfat or iso9660) with user-data, meta-data and
//   optionally network-config at its root; or
//   ds=nocloud;s=<seed>/ or ds=nocloud-net;s=http://.../ on the kernel command line or
//   in the SMBIOS system serial (keys: s seedfrom, i instance-id, h local-hostname).
import { parseMetaData } from '../../../machinery/config/cloud-init/meta-data.ts';
import { translateNetworkConfig } from '../../../machinery/config/cloud-init/network-config.ts';
import { parsePyYaml } from '../../../machinery/config/safe-yaml.ts';
import type { PlatformNetworkSpec } from '../../../proto/gen/spec-types.ts';
import { absent, failed, fetchEach, type ConfigSourceDef, type Outcome, type SourceEnv } from './source.ts';

export const NOCLOUD_LABELS = ['cidata', 'CIDATA'];
const FILES = ['user-data', 'meta-data', 'network-config'] as const;

export interface DsSpec { kind: 'nocloud' | 'nocloud-net'; seedfrom?: string; instanceId?: string; hostname?: string }

/** "nocloud-net;s=http://10.0.2.2/seed/;h=node1" -> its parts; undefined when not a nocloud ds. */
export function parseDs(value: string | undefined): DsSpec | undefined {
  if (!value) return undefined;
  const [kind, ...rest] = value.trim().split(';');
  if (kind !== 'nocloud' && kind !== 'nocloud-net') return undefined;
  const ds: DsSpec = { kind };
  for (const kv of rest) {
    const i = kv.indexOf('=');
    const k = i < 0 ? kv : kv.slice(0, i);
    const v = i < 0 ? '' : kv.slice(i + 1);
    if (k === 's' || k === 'seedfrom') ds.seedfrom = v;
    else if (k === 'i' || k === 'instance-id') ds.instanceId = v;
    else if (k === 'h' || k === 'local-hostname') ds.hostname = v;
  }
  return ds;
}

/** ds= from the command line, else from the SMBIOS serial ("ds=nocloud-net;s=..."). */
export function dsOf(env: SourceEnv): { ds: DsSpec; from: string } | undefined {
  const cmd = parseDs(env.params.ds);
  if (cmd) return { ds: cmd, from: 'the kernel command line' };
  const serial = /(?:^|\s)ds=(\S+)/.exec(env.dmi.serial)?.[1];
  const s = parseDs(serial);
  return s ? { ds: s, from: 'the SMBIOS serial' } : undefined;
}

const seedVolume = (env: SourceEnv) => env.volumes().find((v) => NOCLOUD_LABELS.includes(v.label));

/** The three files -> an outcome: meta-data is required, the other two are optional. */
export function fromSeed(files: ReadonlyMap<string, Buffer | undefined>, where: string, ds?: DsSpec): Outcome {
  const metaText = files.get('meta-data');
  if (metaText === undefined && !ds?.instanceId) return failed(`${where}: no meta-data`);
  const meta = parseMetaData(metaText?.toString('utf8') ?? '');
  if (!meta.ok) return failed(`${where}: ${meta.message}`);
  const ignored = [...meta.meta.ignored];
  let network: PlatformNetworkSpec | undefined;
  const nc = files.get('network-config');
  if (nc !== undefined) {
    const y = parsePyYaml(nc.toString('utf8'));
    if (!y.ok) return failed(`${where}: network-config: ${y.message}`);
    const t = translateNetworkConfig(y.value);
    if (!t.ok) return failed(`${where}: ${t.message}`);
    network = t.network;
    // What the network part does not apply is listed with the rest, so `cosictl get configstatus` shows it.
    ignored.push(...(y.warnings ?? []).map((w) => `network-config ${w}`), ...(network.ignored ?? []));
  }
  const hostname = ds?.hostname || meta.meta.hostname;
  if (network) network.hostname = hostname;
  else if (hostname) network = { hostname, interfaces: [] };
  const userData = files.get('user-data');
  return {
    kind: 'found', ...(userData !== undefined ? { userData } : {}), ignored,
    meta: { platform: 'nocloud', instanceId: ds?.instanceId || meta.meta.instanceId, hostname },
    metaData: meta.meta.raw,
    ...(network ? { network } : {}),
    message: `${where}: ${[...files].filter(([, v]) => v !== undefined).map(([k]) => k).join(', ')}`,
  };
}

export const nocloud: ConfigSourceDef = {
  name: 'nocloud',
  network: (env) => !seedVolume(env) && (dsOf(env)?.ds.seedfrom ?? '').startsWith('http'),
  // A seed volume or a seed URL (a ds= naming NoCloud without either has nothing to read: absent at once).
  present: (env) => seedVolume(env) !== undefined || Boolean(dsOf(env)?.ds.seedfrom),
  location(env) {
    const v = seedVolume(env);
    if (v) return `${v.devPath} (${v.label})`;
    return dsOf(env)?.ds.seedfrom ?? 'a volume labelled cidata';
  },
  async fetch(env) {
    const v = seedVolume(env);
    const found = dsOf(env);
    if (v) {
      let files: Map<string, Buffer | undefined>;
      try {
        files = await env.readVolume(v, FILES);
      } catch (e) {
        return failed(`${v.devPath}: ${(e as Error).message}`);
      }
      return fromSeed(files, `${v.devPath} (${v.label})`, found?.ds);
    }
    const seed = found?.ds.seedfrom;
    if (!seed) return absent('no volume labelled cidata and no ds=nocloud;s=... seed');
    if (!/^https?:\/\//.test(seed)) {
      return failed(`seedfrom ${seed} (from ${found.from}): only http:// and https:// seeds are fetched`);
    }
    const base = seed.endsWith('/') ? seed : `${seed}/`;
    const got = await fetchEach(FILES, (f) => env.http({ url: `${base}${f}` }),
      { name: (f) => `${base}${f}`, required: ['meta-data'] });
    return 'bodies' in got ? fromSeed(got.bodies, base, found.ds) : got;
  },
};
