// gce: Google Compute Engine metadata at metadata.google.internal (169.254.169.254).
// Every request carries Metadata-Flavor: Google, and an answer without that header is
// not from the metadata server and is refused.
import { fetchEach, userDataPhrase, type ConfigSourceDef, type Outcome } from './source.ts';

export const GCE_HOST = 'metadata.google.internal';
export const GCE_ADDRESS = '169.254.169.254';
const BASE = `http://${GCE_ADDRESS}/computeMetadata/v1/instance`;

export const gce: ConfigSourceDef = {
  name: 'gce',
  network: () => true,
  // Asked only on a machine detected as GCE: its metadata service may hold user data.
  present: () => true,
  location: () => `http://${GCE_HOST}/computeMetadata/v1/`,
  async fetch(env): Promise<Outcome> {
    const get = async (path: string) => {
      const r = await env.http({ url: `${BASE}/${path}`, headers: { 'Metadata-Flavor': 'Google', Host: GCE_HOST } });
      if (r.ok && r.status === 200 && r.headers['metadata-flavor'] !== 'Google') {
        return { ok: false as const, message: `${BASE}/${path}: the answer lacks Metadata-Flavor: Google` };
      }
      return r;
    };
    const got = await fetchEach(['id', 'hostname', 'zone', 'machine-type', 'attributes/user-data'], get,
      { name: (p) => `instance/${p}`, required: ['id'] });
    if (!('bodies' in got)) return got;
    const meta = (p: string) => got.bodies.get(p)?.toString('utf8').trim() ?? '';
    const userData = got.bodies.get('attributes/user-data');
    const zone = meta('zone').split('/').pop() ?? '';
    const hostname = meta('hostname').split('.')[0] ?? '';
    return {
      kind: 'found', ...(userData ? { userData } : {}), ignored: [],
      meta: {
        platform: 'gcp', instanceId: meta('id'), hostname, zone, region: zone.replace(/-[a-z]$/, ''),
        instanceType: meta('machine-type').split('/').pop() ?? '',
      },
      network: { hostname, interfaces: [], timeServers: [GCE_HOST] },
      message: `instance ${meta('id')}${userDataPhrase(userData)}`,
    };
  },
};
