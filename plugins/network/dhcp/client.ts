// client: one DHCPv4 client on one link (RFC 2131): DISCOVER -> OFFER -> REQUEST ->
// ACK, renew at T1, rebind at T2, start over when the lease expires or a NAK comes,
// RELEASE when stopped. Everything goes through an AF_PACKET socket bound to the
// link, because the link has no address to send from until the ACK.
import type { Native } from '../../../native/index.ts';
import { decodeUdp, encodeUdp } from './ipv4-udp.ts';
import { decodeDhcp, DHCP, encodeDhcp, leaseOf, messageType, opt, OPT, type Lease } from './message.ts';

export type DhcpState = 'selecting' | 'requesting' | 'bound' | 'renewing' | 'rebinding' | 'stopped';

export interface DhcpClientOptions {
  native: Native;
  ifindex: number;
  mac: string;
  hostname?: string;
  log: { info(m: string): void; warn(m: string): void };
  onLease: (lease: Lease | null) => void;
  /** First retransmission wait; doubles up to 16x (RFC 2131 4.1). */
  retryMs?: number;
}

const PARAMS = [
  OPT.SUBNET_MASK, OPT.ROUTER, OPT.DNS, OPT.HOSTNAME, OPT.DOMAIN, OPT.MTU, OPT.NTP, OPT.LEASE_TIME, OPT.T1, OPT.T2,
];

/**
 * A transaction id (RFC 2131: random, to match replies to requests). Math.random, not node:crypto (2 MiB held by the
 * network plugin's process for good, machinery/sys/lazy-builtins.ts): the exchange is broadcast on the link, where
 * whoever could spoof a reply reads the id anyway, so an unguessable one protects nothing.
 */
const transactionId = () => Math.floor(Math.random() * 2 ** 31);

export class DhcpClient {
  state: DhcpState = 'selecting';
  lease: Lease | null = null;
  private fd = -1;
  private stopReading: (() => void) | undefined;
  private xid = transactionId();
  private retry: NodeJS.Timeout | undefined;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly o: DhcpClientOptions) {}

  start(): void {
    this.fd = this.o.native.packetOpen(this.o.ifindex);
    this.stopReading = this.o.native.subscribeDatagrams(this.fd, (pkt) => this.receive(pkt));
    this.discover();
  }

  stop(release: boolean): void {
    if (release && this.lease && this.state !== 'stopped') {
      try {
        this.send(DHCP.RELEASE, {
          ciaddr: this.lease.address, src: this.lease.address, dst: this.lease.server,
          extra: [[OPT.SERVER_ID, opt.ip(this.lease.server)]],
        });
      } catch (e) { this.o.log.warn(`release: ${(e as Error).message}`); }
    }
    this.state = 'stopped';
    this.clearTimers();
    this.stopReading?.();
    if (this.fd >= 0) this.o.native.closeFd(this.fd);
    this.fd = -1;
  }

  private clearTimers(): void {
    clearTimeout(this.retry);
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  private send(
    type: number, p: { ciaddr?: string; src?: string; dst?: string; extra?: [number, Buffer][] } = {},
  ): void {
    const options = new Map<number, Buffer>([
      [OPT.MESSAGE_TYPE, opt.u8(type)],
      [OPT.CLIENT_ID, Buffer.concat([
        Buffer.from([1]), Buffer.from(this.o.mac.split(':').map((x) => parseInt(x, 16))),
      ])],
    ]);
    if (type !== DHCP.RELEASE) options.set(OPT.PARAMS, opt.bytes(PARAMS));
    if (this.o.hostname && type !== DHCP.RELEASE) options.set(OPT.HOSTNAME, opt.str(this.o.hostname));
    for (const [k, v] of p.extra ?? []) options.set(k, v);
    const payload = encodeDhcp({
      op: 1, xid: this.xid, broadcast: !p.ciaddr, chaddr: this.o.mac, options,
      ...(p.ciaddr ? { ciaddr: p.ciaddr } : {}),
    });
    this.o.native.packetSend(this.fd, this.o.ifindex, encodeUdp({
      src: p.src ?? '0.0.0.0', dst: p.dst ?? '255.255.255.255', srcPort: 68, dstPort: 67, payload,
    }));
  }

  /** Sends now, and again with exponential backoff (plus jitter) until cancelled; after maxTries, giveUp. */
  private withRetries(sendOnce: () => void, giveUp?: () => void, maxTries = Infinity): void {
    clearTimeout(this.retry);
    const base = this.o.retryMs ?? 4000;
    let tries = 0;
    const go = () => {
      if (this.state === 'stopped') return;
      if (tries >= maxTries) {
        giveUp?.();
        return;
      }
      try {
        sendOnce();
      } catch (e) {
        this.o.log.warn(`send: ${(e as Error).message}`);
      }
      const wait = Math.min(base * 2 ** tries, base * 16) + Math.floor(Math.random() * Math.max(1, base / 4));
      tries++;
      this.retry = setTimeout(go, wait);
    };
    go();
  }

  private discover(): void {
    this.state = 'selecting';
    this.xid = transactionId();
    this.withRetries(() => this.send(DHCP.DISCOVER));
  }

  private receive(pkt: Buffer): void {
    const udp = decodeUdp(pkt);
    if (!udp || udp.dstPort !== 68 || udp.srcPort !== 67) return;
    const m = decodeDhcp(udp.payload);
    if (!m || m.op !== 2 || m.xid !== this.xid || m.chaddr !== this.o.mac) return;
    const type = messageType(m);
    if (type === DHCP.OFFER && this.state === 'selecting') {
      const lease = leaseOf(m);
      if (!lease) return;
      this.state = 'requesting';
      this.withRetries(
        () => this.send(DHCP.REQUEST, {
          extra: [[OPT.REQUESTED_IP, opt.ip(lease.address)], [OPT.SERVER_ID, opt.ip(lease.server)]],
        }),
        () => this.discover(), 4,
      );
    } else if (
      type === DHCP.ACK && (this.state === 'requesting' || this.state === 'renewing' || this.state === 'rebinding')
    ) {
      const lease = leaseOf(m);
      if (!lease) return;
      this.bind(lease);
    } else if (type === DHCP.NAK && this.state !== 'bound') {
      this.o.log.warn(`NAK from ${udp.src}; starting over`);
      this.lose();
    }
  }

  private bind(lease: Lease): void {
    this.clearTimers();
    const renewed = this.lease?.address === lease.address;
    this.lease = lease;
    this.state = 'bound';
    this.o.log.info(`${renewed ? 'renewed' : 'bound'} ${lease.address}/${lease.prefix} from ${lease.server}`
      + ` for ${lease.leaseSeconds}s`);
    this.o.onLease(lease);
    const ms = (s: number) => Math.min(s * 1000, 2 ** 31 - 1);
    this.timers.push(setTimeout(() => {
      this.state = 'renewing';
      this.withRetries(() => this.send(DHCP.REQUEST, { ciaddr: lease.address, src: lease.address, dst: lease.server }));
    }, ms(lease.t1)));
    this.timers.push(setTimeout(() => {
      this.state = 'rebinding';
      this.withRetries(() => this.send(DHCP.REQUEST, { ciaddr: lease.address, src: lease.address }));
    }, ms(lease.t2)));
    this.timers.push(setTimeout(() => {
      this.o.log.warn(`lease on ${lease.address} expired`);
      this.lose();
    }, ms(lease.leaseSeconds)));
  }

  private lose(): void {
    this.clearTimers();
    this.lease = null;
    this.o.onLease(null);
    this.discover();
  }
}
