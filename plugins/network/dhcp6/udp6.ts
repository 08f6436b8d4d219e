// udp6: the DHCPv6 clients' one UDP socket, on port 546 of every link. Unlike DHCPv4, a client
// has an address to send from before it has a lease (the link's fe80:: address), so an ordinary
// socket does: messages go to ff02::1:2 scoped to the link (`%link`), answers come back unicast
// and are told apart by transaction id. Opened by the first client, closed with the last.
import type { Socket } from 'node:dgram';
import { lazyDgram } from '../../../machinery/sys/lazy-builtins.ts';
import { ALL_SERVERS, CLIENT_PORT, SERVER_PORT } from './message.ts';

export interface Dhcp6Transport {
  /** Sends to All_DHCP_Relay_Agents_and_Servers on `link`; a failure (no usable link-local yet) goes to onError. */
  send(link: string, packet: Buffer, onError: (e: Error) => void): void;
  /** Every datagram received on port 546 until the returned stop() (the last stop closes the socket). */
  listen(onPacket: (packet: Buffer) => void): () => void;
}

export function udp6Transport(log: { warn(m: string): void }): Dhcp6Transport {
  let socket: Socket | undefined;
  let sending = 0;
  const listeners = new Set<(packet: Buffer) => void>();
  // Closed once nobody listens and nothing is on its way (a Release sent as the last client stops).
  const closeWhenIdle = () => {
    if (listeners.size || sending || !socket) return;
    socket.close();
    socket = undefined;
  };
  const open = (): Socket => {
    const s = lazyDgram().createSocket({ type: 'udp6', reuseAddr: true });
    s.on('message', (packet) => {
      for (const l of listeners) l(packet);
    });
    // A socket that failed (bind: EADDRINUSE, EACCES) is dropped: the next send opens a new one and tries again.
    s.on('error', (e) => {
      log.warn(`DHCPv6 socket [::]:${CLIENT_PORT}: ${e.message}`);
      if (socket === s) socket = undefined;
      s.close();
    });
    s.bind({ port: CLIENT_PORT, address: '::' });
    return s;
  };
  return {
    send(link, packet, onError) {
      sending++;
      (socket ??= open()).send(packet, SERVER_PORT, `${ALL_SERVERS}%${link}`, (e) => {
        sending--;
        if (e) onError(e);
        closeWhenIdle();
      });
    },
    listen(onPacket) {
      socket ??= open();
      listeners.add(onPacket);
      return () => {
        listeners.delete(onPacket);
        closeWhenIdle();
      };
    },
  };
}
