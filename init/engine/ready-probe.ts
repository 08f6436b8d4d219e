// ready-probe: whether a supervised program that is not a COSI plugin is ready yet, by the check its
// manifest declares: a TCP connection to a port on the machine's loopback is accepted, or an HTTP GET
// of a path there answers 2xx or 3xx. One try per call, bounded in time; the supervisor repeats it.
import { request } from 'node:http';
import { connect } from 'node:net';
import { readyWords, type ReadyCheck } from '../../machinery/model/extension-manifest.ts';

/** One try of `check` against 127.0.0.1: true, or the reason it is not ready (the error the call gave). */
export function probeOnce(check: ReadyCheck, timeoutMs = 1000): Promise<true | string> {
  if (check.kind === 'plugin' || check.kind === 'started') return Promise.resolve(true);
  if (check.kind === 'tcp') {
    return new Promise((res) => {
      const s = connect({ host: '127.0.0.1', port: check.port, timeout: timeoutMs });
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('timeout', () => {
        s.destroy();
        res(`${readyWords(check)}: no answer in ${timeoutMs}ms`);
      });
      s.once('error', (e: NodeJS.ErrnoException) => res(`${readyWords(check)}: ${e.code ?? e.message}`));
    });
  }
  const what = readyWords(check);
  return new Promise((res) => {
    const req = request({ host: '127.0.0.1', port: check.port, path: check.path, timeout: timeoutMs }, (r) => {
      r.resume();
      const code = r.statusCode ?? 0;
      res(code >= 200 && code < 400 ? true : `${what}: answered ${code}`);
    });
    req.once('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs}ms`)));
    req.once('error', (e: NodeJS.ErrnoException) => res(`${what}: ${e.code ?? e.message}`));
    req.end();
  });
}
