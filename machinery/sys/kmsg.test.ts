import t from 'tap';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { openKmsg, parseKmsgRecord } from './kmsg.ts';

t.test('a record: priority split into facility and level, escapes decoded, dictionary lines left out', async (t) => {
  t.same(parseKmsgRecord('6,339,5140900,-;NET: Registered protocol family 10\n SUBSYSTEM=net\n DEVICE=+net:lo\n'), {
    facility: 0, level: 6, seq: 339, usec: 5140900, message: 'NET: Registered protocol family 10',
  });
  t.same(parseKmsgRecord('12,7,100,c,more;tab\\x09here\\x5c'), {
    facility: 1, level: 4, seq: 7, usec: 100, message: 'tab\there\\',
  });
  t.equal(parseKmsgRecord('no header at all'), undefined);
  t.equal(parseKmsgRecord('6,x,1,-;seq is not a number'), undefined);
});

t.test('the real /dev/kmsg: a line written there is read back, once, by a reader of its own', async (t) => {
  const mark = `kmsg-test ${randomUUID()}`;
  const reader = openKmsg();
  t.teardown(() => reader.close());
  writeFileSync('/dev/kmsg', `<5>${mark}\n`);
  const first = reader.readAvailable().filter((r) => r.message.includes(mark));
  t.equal(first.length, 1, 'found in the first read');
  t.match(first[0], { facility: 1, level: 5 });
  t.equal(reader.readAvailable().filter((r) => r.message.includes(mark)).length, 0, 'a second read starts after it');
  writeFileSync('/dev/kmsg', `<4>${mark} again\n`);
  t.same(reader.readAvailable().map((r) => r.message).filter((m) => m.includes(mark)), [`${mark} again`]);
});
