// client: one DHCPv6 client on one link (RFC 8415).
//   stateful   Solicit -> Advertise -> Request -> Reply: addresses (IA_NA) and options; Renew to
//              the same server at T1, Rebind to any at T2, start over when the addresses expire;
//              Release when stopped
//   stateless  Information-Request -> Reply: options only, asked again after the refresh time
// Each exchange retransmits as section 15 says (RT doubles from IRT up to MRT, +-10% jitter,
// until MRC tries or MRD time). The first usable Advertise is taken (no wait for a better one:
// a link has one server in practice; the wait would cost a second of every boot).
import { lazyCrypto } from '../../../machinery/sys/lazy-builtins.ts';
import {
  answerOf, decodeDhcp6, duidLL, encodeDhcp6, encodeIaNa, first, MSG, OPTION, opt, STATUS, type IaAddress,
  type Option, type ServerAnswer,
} from './message.ts';
import type { Dhcp6Transport } from './udp6.ts';
import type { Dhcp6State } from '../types.ts';
import { msSinceStart } from '../../../cosi/monotonic.ts';

export type Dhcp6Mode = 'stateful' | 'stateless';

export interface Dhcp6Lease {
  addresses: IaAddress[];
  dns: string[];
  domains: string[];
  ntp: string[];
  serverId: Buffer;
  /** Seconds until the options should be asked again (stateless), or the shortest valid lifetime. */
  lifetime: number;
}

export interface Dhcp6ClientOptions {
  transport: Dhcp6Transport;
  link: string;
  mac: string;
  mode: Dhcp6Mode;
  log: { info(m: string): void; warn(m: string): void };
  onChange: () => void;
  /** Multiplies the RFC's initial retransmission times (tests make them shorter). */
  timeScale?: number;
}

/** RFC 8415 7.6 (seconds): initial and maximum retransmission time, maximum count. */
const TIMES = {
  solicit: { irt: 1, mrt: 3600, mrc: 0 },
  request: { irt: 1, mrt: 30, mrc: 10 },
  renew: { irt: 10, mrt: 600, mrc: 0 },
  rebind: { irt: 10, mrt: 600, mrc: 0 },
  inform: { irt: 1, mrt: 3600, mrc: 0 },
} as const;
const ORO = [OPTION.DNS_SERVERS, OPTION.DOMAIN_LIST, OPTION.NTP_SERVER, OPTION.SNTP_SERVERS,
  OPTION.INFORMATION_REFRESH_TIME];
/** RFC 8415 21.23: the refresh time when the server gives none, and the least a client accepts. */
const IRT_DEFAULT = 86400;
const IRT_MINIMUM = 600;
const INFINITY = 0xffffffff;

/** The longest wait one setTimeout holds (it wraps past 2^31 - 1 ms). */
const MAX_TIMER = 2 ** 31 - 1;

export class Dhcp6Client {
  state: Dhcp6State;
  lease: Dhcp6Lease | null = null;
  private readonly duid: Buffer;
  private readonly iaid: number;
  private xid = 0;
  private started = 0;
  private retry: NodeJS.Timeout | undefined;
  private timers: NodeJS.Timeout[] = [];
  private stopListening: (() => void) | undefined;
  private onAnswer: ((a: ServerAnswer, type: number) => void) | undefined;

  constructor(private readonly o: Dhcp6ClientOptions) {
    this.duid = duidLL(o.mac);
    // Stable for the link and different between links that share a MAC (a VLAN and its parent): from its name.
    this.iaid = lazyCrypto().createHash('sha256').update(o.link).digest().readUInt32BE(0);
    this.state = o.mode === 'stateful' ? 'soliciting' : 'informing';
  }

  start(): void {
    this.stopListening = this.o.transport.listen((packet) => this.receive(packet));
    if (this.o.mode === 'stateful') this.solicit();
    else this.inform();
  }

  stop(release: boolean): void {
    if (release && this.lease?.addresses.length && this.state !== 'stopped') {
      this.xid = lazyCrypto().randomInt(2 ** 24);
      this.started = msSinceStart();
      // One Release, not retransmitted: the machine is going or the link is given up; the server's lease times out.
      this.send(MSG.RELEASE, [[OPTION.SERVERID, this.lease.serverId], this.ia(this.lease.addresses)]);
    }
    this.state = 'stopped';
    this.clearTimers();
    this.stopListening?.();
    this.stopListening = undefined;
  }

  private clearTimers(): void {
    clearTimeout(this.retry);
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  private ia(addresses: readonly IaAddress[]): Option {
    // The lifetimes a client sends are ignored by servers (RFC 8415 21.6): zero.
    const unset = addresses.map((a) => ({ ...a, preferred: 0, valid: 0 }));
    return encodeIaNa({ iaid: this.iaid, t1: 0, t2: 0, addresses: unset });
  }

  private send(type: number, options: Option[]): void {
    const elapsed = Math.min(Math.round((msSinceStart() - this.started) / 10), 0xffff);
    const packet = encodeDhcp6({
      type, xid: this.xid,
      options: [[OPTION.CLIENTID, this.duid], opt.u16(OPTION.ELAPSED_TIME, elapsed), ...options],
    });
    this.o.transport.send(this.o.link, packet, (e) => this.o.log.warn(`send: ${e.message}`));
  }

  /** One exchange: a new transaction id, sent now and again as RFC 8415 15 says until an answer or `maxMs`. */
  private exchange(
    times: { irt: number; mrt: number; mrc: number }, type: number, options: () => Option[],
    onAnswer: (a: ServerAnswer, type: number) => void, maxMs = Infinity, onGiveUp?: () => void,
  ): void {
    clearTimeout(this.retry);
    this.xid = lazyCrypto().randomInt(2 ** 24);
    this.started = msSinceStart();
    this.onAnswer = onAnswer;
    const scale = this.o.timeScale ?? 1;
    const jitter = (rt: number) => rt * (lazyCrypto().randomInt(-100, 101) / 1000);
    // Solicit's first wait is never shorter than IRT (RFC 8415 18.2.1).
    let rt = times.irt * 1000 * scale;
    rt += type === MSG.SOLICIT ? Math.abs(jitter(rt)) : jitter(rt);
    let tries = 0;
    const go = () => {
      if (this.state === 'stopped') return;
      if ((times.mrc && tries >= times.mrc) || msSinceStart() - this.started >= maxMs) {
        onGiveUp?.();
        return;
      }
      this.send(type, options());
      tries++;
      this.retry = setTimeout(go, Math.min(rt, maxMs - (msSinceStart() - this.started)));
      const next = 2 * rt + jitter(rt);
      rt = Math.min(next, times.mrt * 1000 * scale + jitter(times.mrt * 1000 * scale));
    };
    go();
  }

  private solicit(): void {
    this.state = 'soliciting';
    this.exchange(TIMES.solicit, MSG.SOLICIT, () => [opt.oro(ORO), this.ia([])], (a, type) => {
      if (type !== MSG.ADVERTISE || a.status?.code === STATUS.NO_ADDRS_AVAIL) return;
      if (!a.ia?.addresses.length) {
        if (a.ia?.status) this.o.log.warn(`Advertise without addresses: ${a.ia.status.name} ${a.ia.status.message}`);
        return;
      }
      this.request(a);
    });
  }

  private request(advertise: ServerAnswer): void {
    this.state = 'requesting';
    this.exchange(TIMES.request, MSG.REQUEST,
      () => [[OPTION.SERVERID, advertise.serverId], opt.oro(ORO), this.ia(advertise.ia!.addresses)],
      (a, type) => this.replied(a, type), Infinity, () => this.solicit());
  }

  /** A Reply to Request, Renew or Rebind. */
  private replied(a: ServerAnswer, type: number): void {
    if (type !== MSG.REPLY) return;
    if (a.status && a.status.code !== STATUS.SUCCESS) {
      this.o.log.warn(`Reply: ${a.status.name} ${a.status.message}`.trim());
      if (a.status.code === STATUS.UNSPEC_FAIL || a.status.code === STATUS.USE_MULTICAST) return; // retransmit
    }
    const addresses = a.ia?.addresses.filter((x) => x.valid > 0) ?? [];
    if (!addresses.length) {
      this.o.log.warn(`Reply without addresses${a.ia?.status ? ` (${a.ia.status.name})` : ''}: soliciting again`);
      this.lose();
      return;
    }
    this.bind(a, addresses);
  }

  private bind(a: ServerAnswer, addresses: IaAddress[]): void {
    this.clearTimers();
    this.onAnswer = undefined; // the exchange is over: a late answer to a retransmission is not a new lease
    const renewed = this.state === 'renewing' || this.state === 'rebinding';
    const valid = Math.min(...addresses.map((x) => x.valid));
    // A deprecated address (preferred 0) does not make T1 and T2 zero: the others', or the valid lifetime, do.
    const usable = addresses.filter((x) => x.preferred > 0);
    const base = usable.length ? Math.min(...usable.map((x) => x.preferred)) : valid;
    this.lease = { addresses, dns: a.dns, domains: a.domains, ntp: a.ntp, serverId: a.serverId, lifetime: valid };
    this.state = 'bound';
    this.o.log.info(`${renewed ? 'renewed' : 'bound'} ${addresses.map((x) => x.address).join(', ')} for ${valid}s`);
    this.o.onChange();
    // T1 and T2 of 0 leave them to the client: half and 0.8 of the preferred lifetime (RFC 8415 21.4); at least a
    // second, so that a lease of tiny lifetimes does not turn into a storm of Renews.
    const t1 = Math.max(a.ia!.t1 || Math.floor(base / 2), 1);
    const t2 = Math.max(a.ia!.t2 || Math.floor(base * 0.8), t1);
    const scale = this.o.timeScale ?? 1;
    const lease = this.lease;
    // Renew only before T2 (T1 = T2: straight to Rebind), so a Renew never replaces a Rebind under way.
    if (t1 < t2 && t1 !== INFINITY) {
      this.after(t1, () => {
        this.state = 'renewing';
        const options = (): Option[] => [[OPTION.SERVERID, lease.serverId], opt.oro(ORO), this.ia(addresses)];
        this.exchange(TIMES.renew, MSG.RENEW, options, (r, type) => this.replied(r, type), (t2 - t1) * 1000 * scale);
      });
    }
    if (t2 !== INFINITY && t2 < valid) {
      this.after(t2, () => {
        this.state = 'rebinding';
        this.exchange(TIMES.rebind, MSG.REBIND, () => [opt.oro(ORO), this.ia(addresses)],
          (r, type) => this.replied(r, type), (valid - t2) * 1000 * scale);
      });
    }
    if (valid !== INFINITY) {
      this.after(valid, () => {
        this.o.log.warn(`addresses ${addresses.map((x) => x.address).join(', ')} expired`);
        this.lose();
      });
    }
  }

  /** Runs `fn` after `seconds` (scaled), in steps one timer can hold: a 30-day lifetime does not end in 24.8. */
  private after(seconds: number, fn: () => void): void {
    let left = seconds * 1000 * (this.o.timeScale ?? 1);
    const step = () => {
      if (left <= MAX_TIMER) {
        this.timers.push(setTimeout(fn, left));
        return;
      }
      left -= MAX_TIMER;
      this.timers.push(setTimeout(step, MAX_TIMER));
    };
    step();
  }

  private lose(): void {
    this.clearTimers();
    const had = this.lease !== null;
    this.lease = null;
    if (had) this.o.onChange();
    this.solicit();
  }

  private inform(): void {
    this.state = 'informing';
    this.exchange(TIMES.inform, MSG.INFORMATION_REQUEST, () => [opt.oro(ORO)], (a, type) => {
      if (type !== MSG.REPLY) return;
      if (a.status && a.status.code !== STATUS.SUCCESS) {
        this.o.log.warn(`Reply: ${a.status.name} ${a.status.message}`.trim()); // asked again (retransmission)
        return;
      }
      clearTimeout(this.retry);
      this.onAnswer = undefined;
      const refresh = Math.max(a.refresh ?? IRT_DEFAULT, IRT_MINIMUM);
      this.lease = {
        addresses: [], dns: a.dns, domains: a.domains, ntp: a.ntp, serverId: a.serverId, lifetime: refresh,
      };
      this.state = 'informed';
      this.o.log.info(`options: DNS ${a.dns.join(', ') || 'none'}; asking again in ${refresh}s`);
      this.o.onChange();
      this.after(refresh, () => this.inform());
    });
  }

  private receive(packet: Buffer): void {
    const m = decodeDhcp6(packet);
    if (!m || m.xid !== this.xid || (m.type !== MSG.ADVERTISE && m.type !== MSG.REPLY)) return;
    // RFC 8415 16.10-16.11: the answer must name this client.
    const client = first(m, OPTION.CLIENTID);
    if (client && !client.equals(this.duid)) return;
    if (!client && this.o.mode === 'stateful') return;
    // A stateless client's Reply may come without a server id (QEMU's user network): it names this client.
    const a = answerOf(m, this.iaid, this.state === 'informing' && client !== undefined);
    if (a) this.onAnswer?.(a, m.type);
  }
}
