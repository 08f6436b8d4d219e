// dnsmasq-netns: the real DHCP, DHCPv6 and router advertisement server of the network tests and
// bench:network. dnsmasq runs in a network namespace of its own, across veth pairs from the caller's
// namespace (the caller has unshared one: nothing touches the host's links), so the two sides are two
// hosts (in one namespace a client's unicast would arrive as a martian). Needs root and `ip`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

export const DNSMASQ = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'].find(existsSync);

export interface DnsmasqLink {
  /** The link left in the caller's namespace (the client's side). */
  local: string;
  /** Its peer, moved to the server's namespace, where dnsmasq serves. */
  peer: string;
  /** The server side's addresses (IPv6 ones without DAD, usable at once). */
  addresses: string[];
}

export interface DnsmasqServer {
  readonly namespace: string;
  readonly process: ChildProcess;
  /** What dnsmasq printed so far (with --log-dhcp: each exchange). */
  log(): string;
  /** Kills dnsmasq and deletes its namespace (also done at exit). */
  stop(): void;
}

/** Starts dnsmasq on the peers of `links`, with the settings every test needs and `args`. */
export function startDnsmasq(name: string, links: DnsmasqLink[], args: string[]): DnsmasqServer {
  if (!DNSMASQ) throw new Error('dnsmasq is not installed (npm run setup installs dnsmasq-base)');
  const namespace = `${name}-${process.pid}`;
  const ip = (...a: string[]) => execFileSync('ip', a);
  ip('netns', 'add', namespace);
  const removeNamespace = () => {
    if (existsSync(`/run/netns/${namespace}`)) execFileSync('ip', ['netns', 'del', namespace], { stdio: 'ignore' });
  };
  process.on('exit', removeNamespace);
  for (const l of links) {
    ip('link', 'add', l.local, 'type', 'veth', 'peer', 'name', l.peer);
    ip('link', 'set', l.peer, 'netns', namespace);
    for (const a of l.addresses) {
      ip('-n', namespace, 'addr', 'add', a, 'dev', l.peer, ...(a.includes(':') ? ['nodad'] : []));
    }
    ip('-n', namespace, 'link', 'set', l.peer, 'up');
  }
  const child = spawn('ip', ['netns', 'exec', namespace, DNSMASQ, '--no-daemon', '--conf-file=/dev/null', '--port=0',
    ...links.map((l) => `--interface=${l.peer}`), '--bind-interfaces', '--leasefile-ro', ...args,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const collect = (d: Buffer) => {
    log += d;
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  process.on('exit', () => child.kill());
  return {
    namespace, process: child, log: () => log,
    stop() {
      child.kill();
      removeNamespace();
    },
  };
}
