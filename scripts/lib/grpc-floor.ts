// grpc-floor: a bare grpc-js unary echo (no COSI code) over mutual TLS, as the machine's
// API is, measured next to our figures so they can be read against what the transport
// itself costs on this host right now.
import {
  credentials, makeGenericClientConstructor, Server, ServerCredentials, type ServiceDefinition,
} from '@grpc/grpc-js';

export interface FloorTls { ca: string; serverCert: string; serverKey: string; clientCert: string; clientKey: string }

export async function grpcEchoFloor(tls: FloorTls, samples = 2000): Promise<{ p50: number; p99: number }> {
  const id = (b: Buffer) => b;
  const def = {
    Echo: {
      path: '/bench.Echo/Echo', requestStream: false, responseStream: false,
      requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id,
    },
  } as unknown as ServiceDefinition;
  const server = new Server();
  server.addService(def, {
    Echo: (call: { request: Buffer }, cb: (e: null, b: Buffer) => void) => cb(null, call.request),
  } as never);
  const port = await new Promise<number>((r, j) => server.bindAsync(
    '127.0.0.1:0',
    ServerCredentials.createSsl(Buffer.from(tls.ca),
      [{ cert_chain: Buffer.from(tls.serverCert), private_key: Buffer.from(tls.serverKey) }], true),
    (e, p) => (e ? j(e) : r(p)),
  ));
  const Client = makeGenericClientConstructor(def, 'Echo');
  const client = new Client(`127.0.0.1:${port}`, credentials.createSsl(
    Buffer.from(tls.ca), Buffer.from(tls.clientKey), Buffer.from(tls.clientCert),
  ), { 'grpc.ssl_target_name_override': 'localhost' }) as unknown as {
    Echo(b: Buffer, cb: () => void): void; close(): void;
  };
  const call = () => new Promise<void>((r) => client.Echo(Buffer.from('ping'), () => r()));
  for (let i = 0; i < 300; i++) await call();
  const xs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await call();
    xs.push(performance.now() - t0);
  }
  client.close();
  server.forceShutdown();
  xs.sort((a, b) => a - b);
  return { p50: xs[Math.floor(xs.length / 2)]!, p99: xs[Math.floor(xs.length * 0.99)]! };
}
