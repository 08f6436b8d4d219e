// lighttpd-oci: an OCI image of a program nobody here wrote, made as a person would from what they have: Debian's
// lighttpd (unpacked into the cache by `npm run setup`, never installed: installed, it would serve port 80 here) with
// the host's libraries ldd names, a config that listens on 8080 (an extension's uid cannot bind below 1024) and
// writes only to /tmp, and a page. umoci packs it into an OCI image layout with its Entrypoint, Cmd and
// ExposedPorts: what `oci:` in appliance.yaml takes.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sharedLibs } from '../../image/elf-deps.ts';
import { CACHE } from './paths.ts';

/** Where `npm run setup` unpacks Debian's lighttpd package. */
export const LIGHTTPD = join(CACHE, 'tools', 'lighttpd', 'usr', 'sbin', 'lighttpd');
export const LIGHTTPD_PORT = 8080;

const CONFIG = `server.port = ${LIGHTTPD_PORT}
server.document-root = "/var/www"
server.upload-dirs = ("/tmp")
index-file.names = ("index.html")
mimetype.assign = (".html" => "text/html; charset=utf-8")
`;

const umoci = (...args: string[]) => execFileSync('umoci', args, { stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * An OCI layout in a new folder under `dir` whose lighttpd serves `page` as /; the layout's path. With `logDir`
 * (a directory under /var/www, such as a volume's path), lighttpd writes its error log there, served as
 * LOGDIR/error.log: each start of it adds a "server started" line.
 */
export function lighttpdOciLayout(dir: string, page: string, o: { logDir?: string } = {}): string {
  if (!existsSync(LIGHTTPD)) throw new Error(`${LIGHTTPD} is missing: npm run setup unpacks Debian's lighttpd there`);
  const work = mkdtempSync(join(dir, 'lighttpd-'));
  const layout = join(work, 'oci');
  umoci('init', '--layout', layout);
  umoci('new', '--image', `${layout}:latest`);
  const bundle = join(work, 'bundle');
  umoci('unpack', '--image', `${layout}:latest`, bundle);
  const root = join(bundle, 'rootfs');
  const put = (path: string, from: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    copyFileSync(from, join(root, path));
  };
  put('/usr/sbin/lighttpd', LIGHTTPD);
  for (const lib of sharedLibs([LIGHTTPD])) put(lib.path, lib.source);
  mkdirSync(join(root, 'etc', 'lighttpd'), { recursive: true });
  const log = o.logDir ? `server.errorlog = "${o.logDir}/error.log"\n` : '';
  writeFileSync(join(root, 'etc', 'lighttpd', 'lighttpd.conf'), CONFIG + log);
  mkdirSync(join(root, 'var', 'www'), { recursive: true });
  writeFileSync(join(root, 'var', 'www', 'index.html'), page);
  umoci('repack', '--image', `${layout}:latest`, bundle);
  umoci('config', '--image', `${layout}:latest`, '--config.entrypoint', '/usr/sbin/lighttpd',
    '--config.cmd', '-D', '--config.cmd', '-f', '--config.cmd', '/etc/lighttpd/lighttpd.conf',
    '--config.exposedports', `${LIGHTTPD_PORT}/tcp`);
  return layout;
}
