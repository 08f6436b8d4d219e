// openstack: the config drive (a volume labelled config-2 with openstack/latest/...) or,
// without one, the same files from the metadata service at 169.254.169.254.
import { isMap, parsePyYaml } from '../../../machinery/config/safe-yaml.ts';
import {
  absent, failed, fetchEach, userDataPhrase, type ConfigSourceDef, type Outcome, type SourceEnv,
} from './source.ts';

export const CONFIG_DRIVE_LABEL = 'config-2';
const BASE = 'http://169.254.169.254/openstack/latest';
const FILES = ['openstack/latest/meta_data.json', 'openstack/latest/user_data', 'openstack/latest/network_data.json'];

const drive = (env: SourceEnv) => env.volumes().find((v) => v.label === CONFIG_DRIVE_LABEL);

function fromFiles(files: ReadonlyMap<string, Buffer | undefined>, where: string): Outcome {
  const metaText = files.get(FILES[0]!);
  if (!metaText) return failed(`${where}: no meta_data.json`);
  const p = parsePyYaml(metaText.toString('utf8'));
  if (!p.ok || !isMap(p.value)) return failed(`${where}: meta_data.json: ${p.ok ? 'not an object' : p.message}`);
  const m = p.value;
  const s = (k: string) => (typeof m[k] === 'string' ? m[k] : '');
  const hostname = (s('hostname') || s('name')).split('.')[0] ?? '';
  const userData = files.get(FILES[1]!);
  return {
    kind: 'found', ...(userData ? { userData } : {}),
    ignored: files.get(FILES[2]!) ? ['openstack network_data.json: not translated yet (DHCP is used)'] : [],
    meta: { platform: 'openstack', instanceId: s('uuid'), hostname, zone: s('availability_zone') }, metaData: m,
    network: { hostname, interfaces: [] },
    message: `${where}: instance ${s('uuid')}`
      + userDataPhrase(userData, 'no user data'),
  };
}

export const openstack: ConfigSourceDef = {
  name: 'openstack',
  network: (env) => !drive(env),
  // Asked only on OpenStack (a config drive, or SMBIOS naming it: its metadata service): it may hold one.
  present: () => true,
  location: (env) => {
    const d = drive(env);
    return d ? `${d.devPath} (${d.label})` : `${BASE}/`;
  },
  async fetch(env) {
    const d = drive(env);
    if (d) {
      try {
        return fromFiles(await env.readVolume(d, FILES), `${d.devPath} (${d.label})`);
      } catch (e) {
        return failed(`${d.devPath}: ${(e as Error).message}`);
      }
    }
    const url = (f: string) => `${BASE}/${f.split('/').pop()}`;
    const got = await fetchEach(FILES, (f) => env.http({ url: url(f) }), { name: url });
    if (!('bodies' in got)) return got;
    if (!got.bodies.get(FILES[0]!)) return absent(`${BASE}/meta_data.json: 404`);
    return fromFiles(got.bodies, `${BASE}/`);
  },
};
