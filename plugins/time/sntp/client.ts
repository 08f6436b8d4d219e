// client: one SNTP exchange over UDP. t1 is read from the clock just before sending;
// t4 is t1 plus the monotonic time that passed, so a clock step in between cannot
// corrupt the sample.
import { isIP } from 'node:net';
import { lazyDgram, lazyDnsPromises } from '../../../machinery/sys/lazy-builtins.ts';
import { encodeRequest, sampleFromReply, type Sample } from './packet.ts';

export const NTP_PORT = 123;

export interface ServerAddress { host: string; port: number }

/** "pool.example", "10.0.0.1", "10.0.0.1:1123", "[fd00::1]:1123" or "fd00::1". */
export function parseServer(text: string): ServerAddress {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : NTP_PORT };
  if (isIP(text) === 6) return { host: text, port: NTP_PORT };
  const m = /^([^:\s]+)(?::(\d+))?$/.exec(text);
  if (!m) throw new Error(`time server "${text}" is not host, host:port or [ipv6]:port`);
  const port = m[2] ? Number(m[2]) : NTP_PORT;
  if (port < 1 || port > 65535) throw new Error(`time server "${text}": port ${port} is out of range`);
  return { host: m[1]!, port };
}

export class SntpError extends Error {
  constructor(message: string, readonly server: string, options?: { cause?: unknown }) {
    super(`${server}: ${message}`, options);
  }
}

export interface QueryResult extends Sample { server: string; address: string }

export async function querySntp(server: string, now: () => number, timeoutMs = 2000): Promise<QueryResult> {
  const { host, port } = parseServer(server);
  let address = host;
  if (!isIP(host)) {
    try {
      address = (await lazyDnsPromises().lookup(host)).address;
    } catch (e) {
      throw new SntpError(`cannot resolve: ${(e as Error).message}`, server, { cause: e });
    }
  }
  const sock = lazyDgram().createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
  try {
    return await new Promise<QueryResult>((resolve, reject) => {
      const timer = setTimeout(() => reject(new SntpError(`no answer within ${timeoutMs} ms`, server)), timeoutMs);
      const fail = (e: Error) => {
        clearTimeout(timer);
        reject(new SntpError(`no answer (${(e as NodeJS.ErrnoException).code ?? e.message})`, server, { cause: e }));
      };
      sock.on('error', fail);
      let request: Buffer;
      let t1 = 0;
      let sentAt = 0n;
      sock.on('message', (reply) => {
        const t4 = t1 + Number(process.hrtime.bigint() - sentAt) / 1e6;
        try {
          const sample = sampleFromReply(reply, request, t1, t4);
          clearTimeout(timer);
          resolve({ ...sample, server, address });
        } catch (e) {
          // The socket is connected, so only this server's datagrams arrive: an unusable
          // one (kiss-o'-death, unsynchronized, wrong originate) ends the query.
          clearTimeout(timer);
          reject(new SntpError((e as Error).message, server, { cause: e }));
        }
      });
      // connect fails on its own (ENETUNREACH without a route, EACCES for a broadcast
      // address); sending on the unconnected socket would throw outside this promise.
      sock.connect(port, address, (e?: Error) => {
        if (e) return fail(e);
        t1 = now();
        sentAt = process.hrtime.bigint();
        request = encodeRequest(t1);
        sock.send(request);
      });
    });
  } finally {
    sock.close();
  }
}
