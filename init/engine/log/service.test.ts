// LogService served from a log book, called as the gRPC server calls it: what `previous` sends.
import t from 'tap';
import { LOG_RPC } from '../../../machinery/model/service-wire.ts';
import { LogBook } from './book.ts';
import { logServiceMethods } from './service.ts';

t.test('previous: the run before; a run no longer held is said so; one run only is refused', async (t) => {
  const book = new LogBook({ ringBytes: 1200 });
  const ring = book.ring('p');
  const logs = logServiceMethods(book).get(LOG_RPC.logs.path)!;
  const read = async (previous: boolean): Promise<string[]> => {
    const got: string[] = [];
    const out = {
      write: (m: Uint8Array) => {
        got.push(LOG_RPC.logs.response.decode(m).message);
        return undefined;
      },
      writeFramed: () => undefined, writeFramedNow: () => undefined, flush: () => undefined,
    };
    if (logs.kind !== 'server-stream') throw new Error('Logs is a server stream');
    const request = Buffer.from(LOG_RPC.logs.request.encode({ source: 'p', follow: false, tail: 0, previous }));
    await logs.handle(request, { signal: new AbortController().signal } as never, out);
    return got;
  };
  ring.startRun();
  ring.append('info', 'one');
  await t.rejects(read(true), { code: 'failed-precondition', message: /p has run once since boot/ });
  ring.startRun();
  ring.append('info', 'two');
  t.same(await read(true), ['one'], 'the run before');
  t.same(await read(false), ['one', 'two'], 'without it: every line held');
  for (let i = 0; i < 40; i++) ring.append('info', `line ${i} of the second run`);
  await t.rejects(read(true),
    { code: 'failed-precondition', message: /p's previous run \(lines 1 to 1\) is no longer kept/ },
    'pushed out of the ring: said, not an empty answer');
});
