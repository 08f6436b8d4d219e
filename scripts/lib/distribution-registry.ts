// distribution-registry: for tests, a real registry: Debian's docker-registry (Distribution 2.8, unpacked into the
// cache by `npm run setup`) on loopback over HTTPS, its certificate signed by a CA made for the test (with the IP
// addresses asked for, e.g. the one a guest reaches it at through QEMU's guestfwd), filled by skopeo from OCI layouts.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../qemu/free-port.ts';
import { CACHE } from './paths.ts';

export const DOCKER_REGISTRY = join(CACHE, 'tools', 'docker-registry', 'usr', 'bin', 'docker-registry');

/** Why a real registry cannot run here (a tool missing), or undefined when it can. */
export function distributionMissing(): string | undefined {
  const has = (cmd: string) => {
    try {
      execFileSync('which', [cmd], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (!existsSync(DOCKER_REGISTRY)) return `needs ${DOCKER_REGISTRY} (npm run setup unpacks it)`;
  const missing = ['skopeo', 'umoci', 'openssl'].filter((c) => !has(c));
  return missing.length ? `needs ${missing.join(', ')}` : undefined;
}

export interface DistributionRegistry {
  port: number;
  /** The CA that signed its certificate (PEM), and where it is. */
  ca: string;
  caFile: string;
  /** Pushes the layout's image `layout:tag` as REPO:tag; its manifest's digest. */
  push(layout: string, repo: string): string;
  close(): void;
}

/** Starts a registry in `dir` whose certificate names 127.0.0.1 and `ips`; resolves once it answers. */
export async function startDistributionRegistry(dir: string, ips: string[] = []): Promise<DistributionRegistry> {
  const run = (cmd: string, ...args: string[]) =>
    execFileSync(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  run('openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=test registry CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  run('openssl', 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1',
    '-keyout', 'tls.key', '-out', 'tls.csr');
  writeFileSync(join(dir, 'san.ext'), `subjectAltName=${['127.0.0.1', ...ips].map((ip) => `IP:${ip}`).join(',')}\n`);
  run('openssl', 'x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
    '-extfile', 'san.ext', '-out', 'tls.crt');
  const port = await freePort();
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'config.yml'), `version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}}
http:
  addr: 127.0.0.1:${port}
  tls: {certificate: ${join(dir, 'tls.crt')}, key: ${join(dir, 'tls.key')}}
`);
  const registry = spawn(DOCKER_REGISTRY, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  registry.stderr.on('data', (d: Buffer) => {
    said += d.toString();
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(`https://127.0.0.1:${port}/v2/`).then(() => true, (e: Error) => !/ECONNREFUSED/.test(
      String((e.cause as Error | undefined)?.message ?? e.message)));
    if (up) break;
    if (Date.now() > deadline) {
      registry.kill();
      throw new Error(`docker-registry did not start: ${said}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const caFile = join(dir, 'ca.crt');
  return {
    port, caFile, ca: readFileSync(caFile, 'utf8'),
    push(layout, repo) {
      const digestFile = join(dir, 'digest');
      run('skopeo', 'copy', '--quiet', '--dest-tls-verify=false', '--digestfile', digestFile, `oci:${layout}`,
        `docker://127.0.0.1:${port}/${repo}`);
      return readFileSync(digestFile, 'utf8').trim();
    },
    close: () => registry.kill(),
  };
}
