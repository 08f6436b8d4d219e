// The codec against a reply chronyd 4.3 (Debian bookworm, `local stratum 8`) sent to
// the request below, captured on loopback.
import t from 'tap';
import { decodePacket, encodeRequest, msToNtp, ntpToMs, sampleFromReply } from './packet.ts';

const request = Buffer.from(
  '23000000000000000000000000000000000000000000000000000000000000000000000000000000ec1a2b3c40000000', 'hex',
);
const reply = Buffer.from(
  '240800e600000000000000007f7f0101eeac1462804af69aec1a2b3c40000000eeac1464315f3307eeac1464323594d4', 'hex',
);

t.test('timestamps: NTP era 0, era 1 after 2036, and the fraction', async (t) => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0, 250);
  t.equal(Math.round(ntpToMs(msToNtp(now))), now);
  t.equal(msToNtp(0).readUInt32BE(0), 2_208_988_800, 'the Unix epoch is 2208988800 s after 1900');
  const after2036 = Date.UTC(2040, 0, 1);
  t.ok(msToNtp(after2036).readUInt32BE(0) < 0x80000000, 'wraps into era 1');
  t.equal(Math.round(ntpToMs(msToNtp(after2036))), after2036, 'and reads back as 2040');
  t.equal(ntpToMs(Buffer.alloc(8)), 0, 'zero means unknown');
});

t.test('a request is version 4, mode 3, with our clock in transmit', async (t) => {
  const r = encodeRequest(Date.UTC(2026, 0, 1));
  t.equal(r.length, 48);
  t.equal(r[0], 0x23);
  const p = decodePacket(r);
  t.equal(p.mode, 'client');
  t.equal(p.version, 4);
  t.equal(Math.round(p.transmitMs), Date.UTC(2026, 0, 1));
});

t.test("decodes chronyd's reply", async (t) => {
  const p = decodePacket(reply);
  t.match(p, {
    leap: 0, version: 4, mode: 'server', stratum: 8, referenceId: '127.127.1.1', pollLog2: 0, precisionLog2: -26,
  });
  t.equal(new Date(p.transmitMs).toISOString().slice(0, 19), '2026-11-21T13:00:20', 'server time');
  t.ok(p.transmitMs >= p.receiveMs, 'sent after received');
  t.same(reply.subarray(24, 32), request.subarray(40, 48), 'originate echoes our transmit');
});

t.test('offset and delay from the four timestamps', async (t) => {
  const p = decodePacket(reply);
  // Pretend our clock was 10 s behind, with 2 ms each way.
  const t1 = p.receiveMs - 10_000 - 2, t4 = p.transmitMs - 10_000 + 2;
  const s = sampleFromReply(reply, request, t1, t4);
  t.ok(Math.abs(s.offsetMs - 10_000) < 0.001, `offset ${s.offsetMs}`);
  t.ok(Math.abs(s.delayMs - 4) < 0.001, `delay ${s.delayMs}`);
  t.equal(s.stratum, 8);
});

t.test('replies that must not set the clock', async (t) => {
  const at = (i: number, v: number, b = Buffer.from(reply)) => {
    b[i] = v;
    return b;
  };
  t.throws(() => sampleFromReply(reply, encodeRequest(Date.now()), 0, 1), /does not answer our request/,
    'spoofed or stale');
  t.throws(() => sampleFromReply(at(0, 0x23), request, 0, 1), /mode client, not server/);
  const kod = Buffer.from(reply);
  kod[1] = 0;
  kod.write('RATE', 12, 'latin1');
  t.throws(() => sampleFromReply(kod, request, 0, 1), /kiss-o'-death "RATE"/);
  t.throws(() => sampleFromReply(at(1, 16), request, 0, 1), /stratum 16 is unsynchronized/);
  t.throws(() => sampleFromReply(at(0, 0xe4), request, 0, 1), /not synchronized \(leap indicator 3\)/);
  t.throws(() => decodePacket(reply.subarray(0, 40)), /40 bytes, need 48/);
});
