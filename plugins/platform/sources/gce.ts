// gce: Google Compute Engine metadata at metadata.google.internal (169.254.169.254).
// Every request carries Metadata-Flavor: Google, and an answer without that header is
// not from the metadata server and is refused.
import { bodyOf, failed, type ConfigSourceDef, type Outcome } from './source.ts';

export const GCE_HOST = 'metadata.google.internal';
export const GCE_ADDRESS = '169.254.169.254';
const BASE = `http://${GCE_ADDRESS}/computeMetadata/v1/instance`;

export const gce: ConfigSourceDef = {
  name: 'gce',
  network: () => true,
  location: () => `http://${GCE_HOST}/computeMetadata/v1/`,
  async fetch(env): Promise<Outcome> {
    const get = async (path: string) => {
      const r = await env.http({ url: `${BASE}/${path}`, headers: { 'Metadata-Flavor': 'Google', Host: GCE_HOST } });
      if (r.ok && r.status === 200 && r.headers['metadata-flavor'] !== 'Google') {
        return { ok: false as const, message: `${BASE}/${path}: the answer lacks Metadata-Flavor: Google` };
      }
      return r;
    };
    const meta: Record<string, string> = {};
    for (const p of ['id', 'hostname', 'zone', 'machine-type']) {
      const b = bodyOf(await get(p), `instance/${p}`);
      if ('body' in b) meta[p] = b.body.toString('utf8').trim();
      else if (b.kind === 'failed' || p === 'id') return b.kind === 'failed' ? b : failed(b.message);
    }
    const ud = bodyOf(await get('attributes/user-data'), 'instance/attributes/user-data');
    if (!('body' in ud) && ud.kind === 'failed') return ud;
    const zone = (meta.zone ?? '').split('/').pop() ?? '';
    const hostname = (meta.hostname ?? '').split('.')[0] ?? '';
    return {
      kind: 'found', ...('body' in ud ? { userData: ud.body } : {}), ignored: [],
      meta: {
        platform: 'gcp', instanceId: meta.id!, hostname, zone, region: zone.replace(/-[a-z]$/, ''),
        instanceType: (meta['machine-type'] ?? '').split('/').pop() ?? '',
      },
      network: { hostname, interfaces: [], timeServers: [GCE_HOST] },
      message: `instance ${meta.id}${'body' in ud ? `, ${ud.body.length} bytes of user data` : ', no user data (404)'}`,
    };
  },
};
