// source: what a config source is, and what it needs from the machine. Each source
// answers with one Outcome: found (user data and/or metadata), absent (nothing here
// for this machine: the next source is asked) or failed (asked again after a backoff).
import type { PlatformMetadataSpec, PlatformNetworkSpec } from '../../../proto/gen/spec-types.ts';
import type { HttpRequest, HttpResult } from '../../../machinery/sys/http-get.ts';

export interface Volume { devPath: string; label: string; fstype: string }

/** SMBIOS strings from /sys/class/dmi/id (empty when unreadable). */
export interface Dmi { uuid: string; serial: string; sysVendor: string; productName: string; biosVendor: string }

export interface SourceEnv {
  /** Kernel command line parameters. */
  params: Readonly<Record<string, string>>;
  dmi: Dmi;
  /** The first physical link's MAC address, for ${mac}; empty when none. */
  mac: string;
  /** The machine's hostname now, for ${hostname}. */
  hostname: string;
  /** Filesystems by label, for seeds (cidata, config-2). */
  volumes(): Volume[];
  /** Mounts the volume read-only, reads the named files (undefined: not there), unmounts. */
  readVolume(v: Volume, files: readonly string[]): Promise<Map<string, Buffer | undefined>>;
  /** Reads a file; undefined when it does not exist. */
  readFile(path: string): Buffer | undefined;
  /** Whether a file exists (nothing read). */
  exists(path: string): boolean;
  http(r: HttpRequest): Promise<HttpResult>;
}

export interface Found {
  kind: 'found';
  /** Raw user data (gzip, cloud-config, MIME, our config); undefined: the platform has none. */
  userData?: Uint8Array;
  meta: Partial<PlatformMetadataSpec>;
  /** The platform's meta-data as it gave it (cloud-init's ds.meta_data, for Jinja user data). */
  metaData?: Record<string, unknown>;
  network?: PlatformNetworkSpec;
  /** Input understood but not used (meta-data keys, network-config parts). */
  ignored: string[];
  message: string;
}

export type Outcome = Found | { kind: 'absent'; message: string } | { kind: 'failed'; message: string };

export interface ConfigSourceDef {
  /** The ConfigSource id: cmdline-inline, cmdline-url, fw-cfg, nocloud, openstack, ec2, gce. */
  name: string;
  /** Needs the network configured (a default route) before it is asked. */
  network(env: SourceEnv): boolean;
  /** Where it looks, for the status. */
  location(env: SourceEnv): string;
  /**
   * It may hold a config for this machine: a look at what names it, nothing read or fetched (PID 1 asks those that
   * may, before the plugins start: config-source.ts lookForConfig).
   */
  present(env: SourceEnv): boolean;
  fetch(env: SourceEnv): Promise<Outcome>;
}

export const absent = (message: string): Outcome => ({ kind: 'absent', message });
export const failed = (message: string): Outcome => ({ kind: 'failed', message });

/**
 * Asks for each path in order: a body is kept; a 404 leaves the path out, or fails the
 * fetch when `required` names it; any other failure ends the fetch with it. `name`
 * says what a path is called in messages.
 */
export async function fetchEach(
  paths: readonly string[], get: (path: string) => Promise<HttpResult>,
  o: { name: (path: string) => string; required?: readonly string[] },
): Promise<{ bodies: Map<string, Buffer> } | Outcome> {
  const bodies = new Map<string, Buffer>();
  for (const p of paths) {
    const b = bodyOf(await get(p), o.name(p));
    if ('body' in b) bodies.set(p, b.body);
    else if (b.kind === 'failed') return b;
    else if (o.required?.includes(p)) return failed(b.message);
  }
  return { bodies };
}

/** ", 42 bytes of user data" or what to say when there is none. */
export const userDataPhrase = (userData: Buffer | undefined, none = 'no user data (404)') =>
  (userData ? `, ${userData.length} bytes of user data` : `, ${none}`);

/** An HTTP answer as an outcome: 404 absent, other non-2xx failed (with the status), 2xx the body. */
export function bodyOf(r: HttpResult, what: string): { body: Buffer } | Outcome {
  if (!r.ok) return failed(r.message);
  if (r.status === 404) return absent(`${what}: 404 (none)`);
  if (r.status < 200 || r.status > 299) return failed(`${what}: HTTP ${r.status}`);
  return { body: r.body };
}
