// watch-delivery-updater: the writer of the watch benchmark, in a thread of its own (as
// the writer is its own process on a machine: cosictl, a plugin). The benchmark's main
// thread holds what its earlier measures left (lists of 10,000 decoded resources): a
// collection of that heap between stamping an update and sending it paused the
// writer for 6-11 ms, which is the benchmark's, not the server's delivery.
// Told 'run' with a count, it makes the updates (each labelled seq=i, i < 0 for a
// warm-up), 5 ms apart, and answers with when each was sent.
import { parentPort, workerData } from 'node:worker_threads';
import { RemoteState } from '../../cosi/remote/client.ts';
import type { ChannelTls } from '../../cosi/remote/grpc/client.ts';
import { builtinCodecs } from '../../machinery/model/spec-codecs.ts';
import { builtinTypes } from '../../plugins/index.ts';
import type { Resource } from '../../cosi/resource/resource.ts';

interface Job { address: string; tls: ChannelTls; namespace: string; type: string; id: string; specField: string }
interface UpdaterRun { from: number; count: number }

const job = workerData as Job;
// Specs travel as protobuf, as plugins and cosictl send them.
const client = new RemoteState(job.address, { tls: job.tls, codecs: builtinCodecs(builtinTypes()) });
let current: Resource = await client.get({ namespace: job.namespace, type: job.type, id: job.id });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

parentPort!.on('message', async (run: UpdaterRun | 'stop') => {
  if (run === 'stop') {
    client.close();
    parentPort!.close();
    return;
  }
  const sentNs: number[] = [];
  for (let k = 0; k < run.count; k++) {
    const seq = run.from + k;
    sentNs.push(Number(process.hrtime.bigint()));
    current = await client.update({
      ...current, metadata: { ...current.metadata, labels: { seq: String(seq) } },
      spec: { ...(current.spec as object), [job.specField]: `watch ${seq}` },
    });
    await sleep(5);
  }
  parentPort!.postMessage({ sentNs });
});
parentPort!.postMessage({ ready: true });
