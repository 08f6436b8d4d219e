import t from 'tap';
import { frame, MessageReader, Status } from './framing.ts';

const read = (r: MessageReader, chunk: Buffer) => {
  const out: string[] = [];
  r.push(chunk, (m) => out.push(m.toString()));
  return out;
};

t.test('whole messages in one chunk are read in place, in order', async (t) => {
  const r = new MessageReader(1024);
  t.same(read(r, Buffer.concat([frame(Buffer.from('one')), frame(Buffer.from('')), frame(Buffer.from('three'))])),
    ['one', '', 'three']);
  t.notOk(r.pending);
});

t.test('a message split anywhere, even inside its prefix, comes out once it is complete', async (t) => {
  const bytes = Buffer.concat([frame(Buffer.from('hello')), frame(Buffer.from('world!'))]);
  for (let cut = 1; cut < bytes.length; cut++) {
    const r = new MessageReader(1024);
    const got = [...read(r, bytes.subarray(0, cut)), ...read(r, bytes.subarray(cut))];
    t.same(got, ['hello', 'world!'], `cut at ${cut}`);
    t.notOk(r.pending, `nothing left after cut ${cut}`);
  }
  const r = new MessageReader(1024);
  t.same(read(r, bytes.subarray(0, 8)), []);
  t.ok(r.pending, 'half a message is pending');
});

t.test('oversized and compressed messages are refused before they are buffered', async (t) => {
  const big = new MessageReader(4);
  t.throws(() => read(big, frame(Buffer.from('12345'))), { name: 'FrameError', status: Status.RESOURCE_EXHAUSTED });
  const compressed = Buffer.from(frame(Buffer.from('x')));
  compressed[0] = 1;
  t.throws(() => read(new MessageReader(64), compressed), { name: 'FrameError', status: Status.UNIMPLEMENTED });
  // refused from the prefix alone, the body never arrived
  t.throws(() => read(new MessageReader(4), Buffer.from([0, 0, 0x10, 0, 0])), /exceeds the limit/);
});
