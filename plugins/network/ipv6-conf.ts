// ipv6-conf: a link's IPv6 settings that rtnetlink cannot write (accept_ra, autoconf), through
// /proc/sys/net/ipv6/conf/<link>/. Synchronous on purpose: /proc/sys/net shows the network
// namespace of the thread that opens it, and only the main thread is sure to be in ours.
import { readFileSync, writeFileSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';

export interface Ipv6Conf {
  /** The value, or undefined when the link has no IPv6 (disabled, or gone). */
  get(link: string, key: string): number | undefined;
  set(link: string, key: string, value: number): void;
}

const path = (link: string, key: string) => `/proc/sys/net/ipv6/conf/${link}/${key}`;

export const procIpv6Conf: Ipv6Conf = {
  get(link, key) {
    try {
      return Number(readFileSync(path(link, key), 'utf8').trim());
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return undefined;
      throw e;
    }
  },
  set(link, key, value) {
    writeFileSync(path(link, key), `${value}\n`);
  },
};

/** accept_ra 2 takes advertisements even when the machine forwards (a bridge may make it); 0 ignores them. */
export function acceptRaSettings(accept: boolean): [string, number][] {
  return [['accept_ra', accept ? 2 : 0], ['autoconf', accept ? 1 : 0]];
}

/** A memory Ipv6Conf for tests without root: every link has IPv6 with the kernel's defaults. */
export function memoryIpv6Conf(): Ipv6Conf & { values: Map<string, number> } {
  const values = new Map<string, number>();
  const defaults: Record<string, number> = { accept_ra: 1, autoconf: 1 };
  return {
    values,
    get: (link, key) => values.get(`${link}/${key}`) ?? defaults[key],
    set: (link, key, value) => {
      values.set(`${link}/${key}`, value);
    },
  };
}
