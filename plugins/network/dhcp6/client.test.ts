// The DHCPv6 client against a server that misbehaves on purpose, scripted at the transport (the
// well-behaved real one is dnsmasq in ipv6.test.ts): answers with another transaction id or for another
// client, an Advertise without addresses, a Reply that says UnspecFail, silence at renewal, lifetimes
// that run out. Times are scaled down (timeScale) so the RFC's timers run in milliseconds.
import t from 'tap';
import { until } from '../../../cosi/conformance/converge.ts';
import { Dhcp6Client } from './client.ts';
import {
  decodeDhcp6, duidLL, encodeDhcp6, encodeIaNa, first, MSG, OPTION, opt, STATUS, type Dhcp6Message, type Option,
} from './message.ts';
import type { Dhcp6Transport } from './udp6.ts';

const MAC = '52:54:00:12:34:56';
const SERVER = Buffer.from('000300015254000000ff', 'hex');

/** A transport whose "server" is the test: it sees every message sent and answers as it likes. */
function scripted(answer: (m: Dhcp6Message, reply: (type: number, options: Option[], xid?: number) => void) => void) {
  const sent: Dhcp6Message[] = [];
  let deliver: ((p: Buffer) => void) | undefined;
  const transport: Dhcp6Transport = {
    send(_link, packet) {
      const m = decodeDhcp6(packet)!;
      sent.push(m);
      const reply = (type: number, options: Option[], xid = m.xid) => {
        const packetBack = encodeDhcp6({ type, xid, options });
        setImmediate(() => deliver?.(packetBack));
      };
      answer(m, reply);
    },
    listen(onPacket) {
      deliver = onPacket;
      return () => {
        deliver = undefined;
      };
    },
  };
  return { transport, sent };
}

const iaOf = (m: Dhcp6Message) => first(m, OPTION.IA_NA)!.readUInt32BE(0);
const client = (m: Dhcp6Message) => [OPTION.CLIENTID, first(m, OPTION.CLIENTID)!] as Option;
const lease = (m: Dhcp6Message, life: { t1: number; t2: number; valid: number }) => encodeIaNa({
  iaid: iaOf(m), t1: life.t1, t2: life.t2,
  addresses: [{ address: '2001:db8::77', preferred: life.valid, valid: life.valid }],
});

t.test('answers that are not for this exchange or this client are passed over', async (t) => {
  const { transport, sent } = scripted((m, reply) => {
    if (m.type !== MSG.SOLICIT) return;
    reply(MSG.ADVERTISE, [[OPTION.SERVERID, SERVER], client(m), lease(m, { t1: 0, t2: 0, valid: 600 })], m.xid ^ 1);
    reply(MSG.ADVERTISE, [[OPTION.SERVERID, SERVER], [OPTION.CLIENTID, duidLL('52:54:00:99:99:99')],
      lease(m, { t1: 0, t2: 0, valid: 600 })]);
    reply(MSG.ADVERTISE, [[OPTION.SERVERID, SERVER], client(m), opt.status(STATUS.NO_ADDRS_AVAIL, 'none left')]);
    reply(MSG.ADVERTISE, [client(m), lease(m, { t1: 0, t2: 0, valid: 600 })]); // no server id
  });
  const c = new Dhcp6Client({ transport, link: 'eth0', mac: MAC, mode: 'stateful', timeScale: 0.01,
    log: { info: () => {}, warn: () => {} }, onChange: () => {} });
  c.start();
  t.teardown(() => c.stop(false));
  await until(() => sent.length >= 3, true, 2000);
  t.equal(c.state, 'soliciting', 'still soliciting: wrong xid, another client, NoAddrsAvail, no server id');
  t.ok(sent.every((m) => m.type === MSG.SOLICIT), `${sent.length} Solicits, nothing else sent`);
  t.same(sent.slice(1).map((m) => m.xid), sent.slice(1).map(() => sent[0]!.xid), 'retransmissions keep the xid');
  const elapsed = sent.map((m) => first(m, OPTION.ELAPSED_TIME)!.readUInt16BE(0));
  t.equal(elapsed[0], 0, 'the first Solicit says 0 elapsed');
});

t.test('UnspecFail is retransmitted past; renew unanswered, rebind answered; expiry starts over', async (t) => {
  let failures = 1;
  let renewAnswered = false;
  let silent = false;
  const { transport, sent } = scripted((m, reply) => {
    const base: Option[] = [[OPTION.SERVERID, SERVER], client(m)];
    const life = { t1: 10, t2: 20, valid: 40 };
    if (silent) return;
    if (m.type === MSG.SOLICIT) reply(MSG.ADVERTISE, [...base, lease(m, life)]);
    else if (m.type === MSG.REQUEST && failures-- > 0) reply(MSG.REPLY, [...base, opt.status(STATUS.UNSPEC_FAIL)]);
    else if (m.type === MSG.REQUEST) reply(MSG.REPLY, [...base, lease(m, life)]);
    else if (m.type === MSG.REBIND && !renewAnswered) {
      renewAnswered = true;
      reply(MSG.REPLY, [...base, lease(m, { t1: 1000, t2: 2000, valid: 40 })]);
    }
  });
  const states: string[] = [];
  const c = new Dhcp6Client({ transport, link: 'eth0', mac: MAC, mode: 'stateful', timeScale: 0.01,
    log: { info: () => {}, warn: () => {} }, onChange: () => states.push(c.lease ? c.state : 'lost') });
  c.start();
  t.teardown(() => c.stop(false));
  t.equal(await until(() => c.state, 'bound', 3000), 'bound', 'bound after the UnspecFail Reply');
  t.ok(sent.filter((m) => m.type === MSG.REQUEST).length >= 2, 'the Request went again');
  t.same(c.lease?.addresses.map((a) => a.address), ['2001:db8::77']);
  await until(() => sent.some((m) => m.type === MSG.RENEW), true, 3000);
  const renew = sent.find((m) => m.type === MSG.RENEW)!;
  t.same(first(renew, OPTION.SERVERID), SERVER, 'Renew names the server');
  await until(() => renewAnswered, true, 3000);
  const rebind = sent.find((m) => m.type === MSG.REBIND)!;
  t.equal(first(rebind, OPTION.SERVERID), undefined, 'Rebind names none (any server may answer)');
  t.equal(await until(() => c.state, 'bound', 2000), 'bound', 'bound again by the Rebind\'s Reply');
  silent = true; // the server goes away
  // The Reply kept a 40 s valid lifetime (0.4 s scaled) but pushed T1 far out: the addresses expire first.
  t.equal(await until(() => c.lease, null, 3000), null, 'the lease runs out');
  t.equal(c.state, 'soliciting', 'and the client starts over');
  t.same(states, ['bound', 'bound', 'lost'], 'bound, bound again (by Rebind), lost: no late re-binds');
});

t.test('stopping a bound client sends one Release naming the server and the address', async (t) => {
  const { transport, sent } = scripted((m, reply) => {
    const base: Option[] = [[OPTION.SERVERID, SERVER], client(m)];
    if (m.type === MSG.SOLICIT) reply(MSG.ADVERTISE, [...base, lease(m, { t1: 0, t2: 0, valid: 600 })]);
    if (m.type === MSG.REQUEST) reply(MSG.REPLY, [...base, lease(m, { t1: 0, t2: 0, valid: 600 })]);
  });
  const c = new Dhcp6Client({ transport, link: 'eth0', mac: MAC, mode: 'stateful', timeScale: 0.01,
    log: { info: () => {}, warn: () => {} }, onChange: () => {} });
  c.start();
  await until(() => c.state, 'bound', 3000);
  c.stop(true);
  const release = sent.filter((m) => m.type === MSG.RELEASE);
  t.equal(release.length, 1);
  t.same(first(release[0]!, OPTION.SERVERID), SERVER);
  t.match(first(release[0]!, OPTION.IA_NA)!.toString('hex'), /20010db8000000000000000000000077/);
  t.equal(c.state, 'stopped');
});

t.test('a deprecated address (preferred 0) with T1 = T2 = 0 does not make the client renew at once', async (t) => {
  const { transport, sent } = scripted((m, reply) => {
    const base: Option[] = [[OPTION.SERVERID, SERVER], client(m)];
    const ia = encodeIaNa({ iaid: iaOf(m), t1: 0, t2: 0, addresses: [
      { address: '2001:db8::1', preferred: 0, valid: 600 }, { address: '2001:db8::2', preferred: 300, valid: 600 },
    ] });
    if (m.type === MSG.SOLICIT) reply(MSG.ADVERTISE, [...base, ia]);
    if (m.type === MSG.REQUEST) reply(MSG.REPLY, [...base, ia]);
  });
  const c = new Dhcp6Client({ transport, link: 'eth0', mac: MAC, mode: 'stateful', timeScale: 0.01,
    log: { info: () => {}, warn: () => {} }, onChange: () => {} });
  c.start();
  t.teardown(() => c.stop(false));
  await until(() => c.state, 'bound', 3000);
  const before = sent.length;
  await new Promise((r) => setTimeout(r, 300)); // 30 s scaled: T1 is 150 s (half the usable address's 300)
  t.equal(sent.length, before, 'nothing sent before T1');
  t.equal(c.state, 'bound');
  await until(() => sent.some((m) => m.type === MSG.RENEW), true, 3000);
  t.ok(sent.some((m) => m.type === MSG.RENEW), 'a Renew at T1 of the address still preferred');
});

t.test('stateless: a Reply with a failure status is not taken; the request goes again', async (t) => {
  let failures = 1;
  const { transport, sent } = scripted((m, reply) => {
    if (m.type !== MSG.INFORMATION_REQUEST) return;
    const base: Option[] = [[OPTION.SERVERID, SERVER], client(m)];
    if (failures-- > 0) reply(MSG.REPLY, [...base, opt.status(STATUS.UNSPEC_FAIL, 'busy')]);
    else reply(MSG.REPLY, [...base, opt.ips(OPTION.DNS_SERVERS, ['2001:db8::53'])]);
  });
  const c = new Dhcp6Client({ transport, link: 'eth0', mac: MAC, mode: 'stateless', timeScale: 0.01,
    log: { info: () => {}, warn: () => {} }, onChange: () => {} });
  c.start();
  t.teardown(() => c.stop(false));
  t.equal(await until(() => c.state, 'informed', 3000), 'informed');
  t.same(c.lease?.dns, ['2001:db8::53'], 'the options of the good Reply, not the empty ones of the failed one');
  t.equal(sent.filter((m) => m.type === MSG.INFORMATION_REQUEST).length, 2, 'asked twice');
});
