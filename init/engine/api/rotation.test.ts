// Rotating the API's CA on a running engine, without a restart, as docs/security.md says:
// accept the new CA's clients first, then issue from the new CA while the old one's
// clients are still accepted, then drop the old one. Clients that trust both CAs keep
// working throughout; a client of a dropped CA is refused, its open connection ended.
import t from 'tap';
import { artifacts } from '../../../qemu/artifacts.ts';
import { startServe } from '../serve-harness.ts';
import { RemoteState } from '../../../cosi/remote/client.ts';
import { generateSecrets, type MachineSecrets } from '../../../machinery/pki/secrets.ts';
import { type ApiCertificateStatusSpec } from '../../../machinery/model/security-types.ts';
import { until } from '../../../cosi/conformance/converge.ts';
import {
  API_CERTIFICATE_AUTHORITY_TYPE, API_CERTIFICATE_STATUS_TYPE, MOTD_TYPE, SECURITY_NS, VERSION_TYPE,
} from '../../../proto/gen/resource-types.ts';
import { newResource } from '../../../cosi/resource/resource.ts';
import { API_ID } from '../../../machinery/model/singleton-ids.ts';

const served = await startServe(artifacts().exe, ['--no-plugins']);
t.teardown(() => served.stop());
const oldCa = served.secrets;
const newCa = generateSecrets();
const version = { namespace: 'runtime', type: VERSION_TYPE, id: 'appliance' };
const caPtr = { namespace: SECURITY_NS, type: API_CERTIFICATE_AUTHORITY_TYPE, id: API_ID };

/** An admin client with `cert`'s certificate that trusts `trust`'s CAs for the server. */
const client = (cert: MachineSecrets, ...trust: MachineSecrets[]) => new RemoteState(`127.0.0.1:${served.port}`, {
  timeoutMs: 5000,
  tls: { ca: trust.map((s) => s.ca.certificate).join(''), cert: cert.clients.admin.certificate,
    key: cert.clients.admin.key },
});
const works = (c: RemoteState) => c.get(version).then(() => 'ok', (e: Error) => e.message);
const issuer = async (c: RemoteState) =>
  ((await c.get({ namespace: SECURITY_NS, type: API_CERTIFICATE_STATUS_TYPE, id: API_ID }))
    .spec as ApiCertificateStatusSpec).issuer;
async function setCa(c: RemoteState, issuing: MachineSecrets, accepted: MachineSecrets[]) {
  const cur = await c.get(caPtr);
  await c.update({ ...cur, spec: {
    certificate: issuing.ca.certificate, key: issuing.ca.key, accepted: accepted.map((s) => s.ca.certificate),
  } });
}

t.test('the CA rotates on a running machine; clients trusting both keep working', async (t) => {
  const oldClient = client(oldCa, oldCa, newCa);
  t.teardown(() => oldClient.close());
  t.equal(await works(oldClient), 'ok');
  // 1. The new CA's clients are accepted too.
  await setCa(oldClient, oldCa, [newCa]);
  const newClient = client(newCa, oldCa, newCa);
  t.teardown(() => newClient.close());
  t.equal(await until(() => works(newClient), 'ok'), 'ok', 'a client of the new CA is admitted');
  t.equal(await works(oldClient), 'ok', 'the old one still is, on its open connection');
  // 2. The machine issues from the new CA; the old CA's clients are still accepted.
  await setCa(newClient, newCa, [oldCa]);
  t.match(await until(() => issuer(newClient), 'O=appliance,CN=appliance API CA'), /appliance API CA/);
  const fresh = client(oldCa, oldCa, newCa);
  t.teardown(() => fresh.close());
  t.equal(await works(fresh), 'ok', 'an old client connecting anew, trusting both CAs, is admitted');
  const onlyOld = client(oldCa, oldCa);
  t.teardown(() => onlyOld.close());
  t.match(await works(onlyOld), /TLS|certificate|verify/i,
    'one that trusts only the old CA cannot check the new server');
  // 3. The old CA goes: its clients are refused, and their open connections end: a watch after a moment,
  // a unary call under way with its answer (one waiting on a finalizer here, let go after that moment).
  const held = { namespace: 'config', type: MOTD_TYPE, id: 'rotation-held' };
  const r = await oldClient.create(newResource(held, { text: 'held' }));
  await oldClient.update({ ...r, metadata: { ...r.metadata, finalizers: ['test-holder'] } });
  const watch = await oldClient.watch({ namespace: 'config', type: MOTD_TYPE }, {}, () => {});
  const watchEnded = watch.done.then(() => Date.now());
  const deleting = oldClient.teardownAndDestroy(held, { deadlineMs: 30_000 }).then(() => 'ok', (e: Error) => e.message);
  await until(async () => (await newClient.get(held)).metadata.phase, 'tearingDown');
  const switched = Date.now();
  await setCa(newClient, newCa, []);
  const watchMs = await watchEnded - switched;
  t.ok(watchMs < 10_000, `the watch on the old CA's connection ended (${watchMs} ms after the switch)`);
  const now = await newClient.get(held);
  await newClient.update({ ...now, metadata: { ...now.metadata, finalizers: [] } });
  t.equal(await deleting, 'ok', 'the call under way on that connection got its answer, past the watches\' grace');
  await until(() => works(oldClient).then((r) => r !== 'ok'), true);
  const later = client(oldCa, oldCa, newCa);
  t.teardown(() => later.close());
  t.match(await works(later), /refused this client's certificate/, 'a client of the old CA is refused');
  t.equal(await works(newClient), 'ok', 'the new CA\'s clients are served');
});

t.test('a CA that cannot be used is reported, and the API stays as it was', async (t) => {
  const admin = client(newCa, newCa);
  t.teardown(() => admin.close());
  const cur = await admin.get(caPtr);
  await admin.update({ ...cur, spec: { certificate: newCa.ca.certificate, key: oldCa.ca.key } });
  const status = await until(async () => ((await admin.get({ namespace: SECURITY_NS, type: API_CERTIFICATE_STATUS_TYPE,
    id: API_ID })).spec as ApiCertificateStatusSpec).error, "the API CA's key is not the key of its certificate");
  t.equal(status, "the API CA's key is not the key of its certificate");
  t.equal(await works(admin), 'ok', 'still served by the CA that worked');
});
