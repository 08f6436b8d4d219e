// client: rtnetlink over the native socket wrappers. Requests go out on one socket
// and get their answer synchronously; kernel notifications arrive on another.
import type { Native } from '../../../native/index.ts';
import { createLinkRequest, decodeLink, deleteLinkRequest, getLinksRequest, RTM, setLinkRequest, type LinkMessage } from './link.ts';
import { decodeMessages, errnoName, errorOf, NetlinkError, NLMSG_DONE, NLMSG_ERROR, type NetlinkMessage } from './netlink.ts';

const NETLINK_ROUTE = 0;

export interface LinkEvent { type: 'new' | 'del'; link: LinkMessage }

export class Rtnl {
  private readonly fd: number;
  private seq = Math.floor(Math.random() * 1e6);

  constructor(private readonly n: Native, private readonly timeoutMs = 2000) {
    this.fd = n.netlinkOpen(NETLINK_ROUTE);
  }

  close(): void { this.n.closeFd(this.fd); }

  /** Sends a request built for a fresh sequence number; returns the answer's messages, or throws the kernel's errno. */
  request(build: (seq: number) => Buffer, what: string): NetlinkMessage[] {
    const seq = ++this.seq;
    const out: NetlinkMessage[] = [];
    for (const d of this.n.netlinkRequest(this.fd, build(seq), this.timeoutMs)) {
      for (const m of decodeMessages(d)) {
        if (m.seq !== seq || m.type === NLMSG_DONE) continue;
        if (m.type === NLMSG_ERROR) {
          const errno = errorOf(m);
          if (errno !== 0) throw new NetlinkError(errno, errnoName(errno), `${what}: ${errnoName(errno)}`, what);
          continue; // the ack
        }
        out.push(m);
      }
    }
    return out;
  }

  links(): LinkMessage[] {
    return this.request(getLinksRequest, 'list links').filter((m) => m.type === RTM.NEWLINK).map((m) => decodeLink(m.payload));
  }

  setLink(index: number, change: { up?: boolean; mtu?: number }): void {
    this.request((seq) => setLinkRequest(seq, index, change), `set link ${index} ${JSON.stringify(change)}`);
  }

  createLink(name: string, kind: string, mtu?: number): void {
    this.request((seq) => createLinkRequest(seq, name, kind, mtu), `create link ${name} (${kind})`);
  }

  deleteLink(index: number): void {
    this.request((seq) => deleteLinkRequest(seq, index), `delete link ${index}`);
  }

  /** Kernel link notifications (RTNLGRP_LINK) until stop() is called. */
  watchLinks(onEvent: (e: LinkEvent) => void): () => void {
    const fd = this.n.netlinkOpen(NETLINK_ROUTE, [1 /* RTNLGRP_LINK */]);
    const stop = this.n.netlinkSubscribe(fd, (datagram) => {
      for (const m of decodeMessages(datagram)) {
        if (m.type === RTM.NEWLINK || m.type === RTM.DELLINK) onEvent({ type: m.type === RTM.NEWLINK ? 'new' : 'del', link: decodeLink(m.payload) });
      }
    });
    return () => { stop(); this.n.closeFd(fd); };
  }
}
