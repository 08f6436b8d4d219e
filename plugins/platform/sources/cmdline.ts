// cmdline: the kernel command line's own config sources.
//   appliance.config.inline=<base64>   the config itself (gzip allowed), for small configs
//   appliance.config=<http(s) URL>     fetched once the network is up; ${uuid} ${serial}
//                                      ${mac} ${hostname} are substituted
import { absent, bodyOf, failed, type ConfigSourceDef, type SourceEnv } from './source.ts';

export const INLINE_PARAM = 'appliance.config.inline';
export const URL_PARAM = 'appliance.config';

export const cmdlineInline: ConfigSourceDef = {
  name: 'cmdline-inline',
  network: () => false,
  location: () => INLINE_PARAM,
  present: (env) => env.params[INLINE_PARAM] !== undefined,
  async fetch(env) {
    const v = env.params[INLINE_PARAM];
    if (v === undefined) return absent(`no ${INLINE_PARAM}= on the kernel command line`);
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) return failed(`${INLINE_PARAM}: not base64`);
    const bytes = Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64');
    return { kind: 'found', userData: bytes, meta: {}, ignored: [], message: `${bytes.length} bytes inline` };
  },
};

/** ${uuid}, ${serial}, ${mac}, ${hostname} -> this machine's values (URL-encoded). */
export function substitute(url: string, env: SourceEnv): string {
  const values: Record<string, string> = {
    uuid: env.dmi.uuid, serial: env.dmi.serial, mac: env.mac, hostname: env.hostname,
  };
  return url.replace(/\$\{(uuid|serial|mac|hostname)\}/g, (_, k: string) => encodeURIComponent(values[k] ?? ''));
}

export const cmdlineUrl: ConfigSourceDef = {
  name: 'cmdline-url',
  network: (env) => env.params[URL_PARAM] !== undefined,
  present: (env) => env.params[URL_PARAM] !== undefined,
  location: (env) => (env.params[URL_PARAM] ? substitute(env.params[URL_PARAM], env) : URL_PARAM),
  async fetch(env) {
    const raw = env.params[URL_PARAM];
    if (raw === undefined) return absent(`no ${URL_PARAM}= on the kernel command line`);
    const url = substitute(raw, env);
    const b = bodyOf(await env.http({ url }), url);
    // A URL the command line names is expected to answer: a 404 is asked again, not taken as "none".
    if (!('body' in b)) return b.kind === 'absent' ? failed(`${url}: 404 (not there yet?)`) : b;
    return { kind: 'found', userData: b.body, meta: {}, ignored: [], message: `${b.body.length} bytes from ${url}` };
  },
};
