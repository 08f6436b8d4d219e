// ec2: AWS EC2 instance metadata, IMDSv2. A token first (PUT /latest/api/token), then
// GETs that carry it; a 401 means the token expired: one new token, then the GET again.
// IMDSv1 (no token) only when the PUT is refused with 403, 404 or 405.
import type { HttpResult } from '../../../machinery/sys/http-get.ts';
import {
  failed, fetchEach, userDataPhrase, type ConfigSourceDef, type Outcome, type SourceEnv,
} from './source.ts';

export const IMDS = 'http://169.254.169.254';
export const EC2_TIME_SERVER = '169.254.169.123';
const TTL_SECONDS = '21600';
const META = ['instance-id', 'local-ipv4', 'public-ipv4', 'local-hostname', 'placement/availability-zone',
  'instance-type'] as const;

class Imds {
  private token: string | undefined;
  v1 = false;
  constructor(private readonly env: SourceEnv) {}

  /** Gets a token; on 403/404/405 falls back to IMDSv1. Returns a failure message, or undefined. */
  async newToken(): Promise<string | undefined> {
    const r = await this.env.http({
      url: `${IMDS}/latest/api/token`, method: 'PUT', headers: { 'X-aws-ec2-metadata-token-ttl-seconds': TTL_SECONDS },
    });
    if (!r.ok) return r.message;
    if ([403, 404, 405].includes(r.status)) {
      this.v1 = true;
      this.token = undefined;
      return undefined;
    }
    if (r.status !== 200 || !r.body.length) return `${IMDS}/latest/api/token: HTTP ${r.status}`;
    this.token = r.body.toString('latin1').trim();
    return undefined;
  }

  async get(path: string): Promise<HttpResult> {
    const once = () => this.env.http({
      url: `${IMDS}/latest/${path}`, ...(this.token ? { headers: { 'X-aws-ec2-metadata-token': this.token } } : {}),
    });
    let r = await once();
    if (r.ok && r.status === 401 && !this.v1) {
      const why = await this.newToken();
      if (why) return { ok: false, message: why };
      r = await once();
    }
    return r;
  }
}

export const ec2: ConfigSourceDef = {
  name: 'ec2',
  network: () => true,
  // Asked only on a machine detected as EC2: its metadata service may hold user data.
  present: () => true,
  location: () => `${IMDS}/latest/ (IMDSv2)`,
  async fetch(env): Promise<Outcome> {
    const imds = new Imds(env);
    const why = await imds.newToken();
    if (why) return failed(why);
    const got = await fetchEach([...META.map((p) => `meta-data/${p}`), 'user-data'], (p) => imds.get(p),
      { name: (p) => p, required: ['meta-data/instance-id'] });
    if (!('bodies' in got)) return got;
    const meta = (p: typeof META[number]) => got.bodies.get(`meta-data/${p}`)?.toString('utf8').trim() ?? '';
    const userData = got.bodies.get('user-data');
    const zone = meta('placement/availability-zone');
    const hostname = meta('local-hostname').split('.')[0] ?? '';
    return {
      kind: 'found', ...(userData ? { userData } : {}), ignored: [],
      meta: {
        platform: 'aws', instanceId: meta('instance-id'), hostname, zone, region: zone.replace(/[a-z]$/, ''),
        instanceType: meta('instance-type'), addresses: [meta('local-ipv4'), meta('public-ipv4')].filter(Boolean),
      },
      network: { hostname, interfaces: [], timeServers: [EC2_TIME_SERVER] },
      message: `${imds.v1 ? 'IMDSv1 (the token PUT was refused)' : 'IMDSv2'}: instance ${meta('instance-id')}`
        + userDataPhrase(userData),
    };
  },
};

