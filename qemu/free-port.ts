// free-port: ports of this computer's 127.0.0.1 for QEMU's forwards (the tests' machines, `appliance run`).
import { createServer } from 'node:net';

/** A port the system hands out as free now. */
export const freePort = (): Promise<number> => new Promise((resolve, reject) => {
  const s = createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const port = (s.address() as { port: number }).port;
    s.close(() => resolve(port));
  });
});

/** Whether `port` can be listened on now. */
export const portFree = (port: number): Promise<boolean> => new Promise((resolve) => {
  const s = createServer();
  s.once('error', () => resolve(false));
  s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
});
