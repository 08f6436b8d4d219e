// slot-payload: the index a slot carries, read back as written, and each way it can be wrong named.
import t from 'tap';
import {
  decodePayload, encodePayload, extensionFile, isPayloadFile, payloadFiles, PAYLOAD_CONFIG, PAYLOAD_INDEX,
  type SlotPayload,
} from './slot-payload.ts';

const payload: SlotPayload = {
  name: 'kiosk', version: '2.0.0', config: true,
  extensions: [
    { name: 'web', sha256: 'a'.repeat(64), bytes: 4096 }, { name: 'hello', sha256: 'b'.repeat(64), bytes: 1 },
  ],
};

t.test('what is encoded decodes the same; the files it names', async (t) => {
  t.same(decodePayload(encodePayload(payload), 'A/appliance.json'), payload);
  const withModules = { ...payload, modules: ['dummy', 'nf_tables'] };
  t.same(decodePayload(encodePayload(withModules), 'A/appliance.json'), withModules, 'the modules it loads');
  t.same(payloadFiles(payload), [PAYLOAD_INDEX, PAYLOAD_CONFIG, 'extension-web.squashfs', 'extension-hello.squashfs']);
  t.same(payloadFiles({ ...payload, config: false, extensions: [] }), [PAYLOAD_INDEX]);
  for (const f of [PAYLOAD_INDEX, PAYLOAD_CONFIG, extensionFile('web')]) t.ok(isPayloadFile(f), f);
  for (const f of ['vmlinuz', 'extension-.squashfs', 'extension-Web.squashfs', 'extension-../x.squashfs', 'x.yaml']) {
    t.notOk(isPayloadFile(f), f);
  }
});

t.test('an index that is wrong: each way named, with where it was read', async (t) => {
  const bad = (v: unknown) =>
    (decodePayload(Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)), 'B/x') as Error).message;
  t.match(bad('{'), /^B\/x: not JSON/);
  t.equal(bad([]), 'B/x: want {name, version, extensions: [...], config: true|false}');
  t.equal(bad({ ...payload, config: 'yes' }), 'B/x: want {name, version, extensions: [...], config: true|false}');
  t.equal(bad({ ...payload, extensions: [{ name: 'web', sha256: 'x', bytes: 1 }] }),
    'B/x: extensions[0]: want {name, sha256 (64 hex digits), bytes}');
  t.equal(bad({ ...payload, extensions: [{ name: '../etc', sha256: 'a'.repeat(64), bytes: 1 }] }),
    'B/x: extensions[0]: want {name, sha256 (64 hex digits), bytes}', 'a name that would leave the slot');
  t.equal(bad({ ...payload, extensions: [payload.extensions[0], payload.extensions[0]] }),
    'B/x: extensions[1]: "web" is named twice');
  t.equal(bad({ ...payload, modules: ['dummy', '../x'] }),
    'B/x: modules: want a list of module names (letters, digits, _ and -)');
});
