// ts-worker: a worker thread running a TypeScript module, for the test and benchmark clients that
// must not share a thread with what they measure (a bystander, the watch benchmark's watchers and
// writer). The module is TypeScript like its caller: the thread registers tsx before importing it.
import { Worker } from 'node:worker_threads';

/** A worker running `url` (a module's file URL, e.g. new URL('./x.ts', import.meta.url)) with `workerData`. */
export function tsWorker(url: URL, workerData: unknown): Worker {
  const boot = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}

/** The worker's next message; rejected if it fails first. */
export function nextMessage(w: Worker): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
}
