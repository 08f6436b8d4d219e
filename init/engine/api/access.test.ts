// The role table, called for real: every RPC of the users' port with every role, over
// mutual TLS to the built engine; the expectations are written out here, not derived
// from the table they check. Also: clients without a certificate from the CA are refused
// by the TLS handshake, and each write and refusal leaves one audit line.
import t from 'tap';
import { join } from 'node:path';
import { runProgram } from '../../../scripts/lib/run-program.ts';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { artifacts } from '../../../qemu/artifacts.ts';
import { startServe } from '../serve-harness.ts';
import { RemoteState } from '../../../cosi/remote/client.ts';
import { newResource, type Pointer } from '../../../cosi/resource/resource.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import { CONFIG_RPC } from '../../../machinery/model/service-wire.ts';
import { ROLES, type Role } from '../../../machinery/model/access.ts';
import { generateSecrets } from '../../../machinery/pki/secrets.ts';
import { generateKey, issueCertificate, keyToPem } from '../../../machinery/pki/certificate.ts';
import { until } from '../../../cosi/conformance/converge.ts';
import {
  API_CERTIFICATE_AUTHORITY_TYPE, API_LIMITS_TYPE, MOTD_TYPE, SECURITY_NS, VERSION_TYPE,
} from '../../../proto/gen/resource-types.ts';
import { API_ID } from '../../../machinery/model/singleton-ids.ts';

const served = await startServe(artifacts().exe, ['--no-plugins']);
t.teardown(() => served.stop());
const clients = Object.fromEntries(ROLES.map((r) => [r, served.client(r, { timeoutMs: 5000 })])) as
  Record<Role, RemoteState>;
t.teardown(() => {
  for (const c of Object.values(clients)) c.close();
});

const motd = (id: string): Pointer => ({ namespace: 'config', type: MOTD_TYPE, id });
const limits: Pointer = { namespace: SECURITY_NS, type: API_LIMITS_TYPE, id: API_ID };
const ca: Pointer = { namespace: SECURITY_NS, type: API_CERTIFICATE_AUTHORITY_TYPE, id: API_ID };
const version: Pointer = { namespace: 'runtime', type: VERSION_TYPE, id: 'appliance' };

/** 'ok', or the StateError code the call ended with. */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (e) {
    if (e instanceof StateError) return e.code;
    throw e;
  }
}
const watchOnce = async (c: RemoteState, p: Pointer) => {
  const w = await c.watch({ namespace: p.namespace, type: p.type }, {}, () => {});
  w.close();
};

t.test('reads: every role reads what is not sensitive; only admins read sensitive types, by any RPC', async (t) => {
  const want: Record<Role, Record<string, string>> = {
    admin: { get: 'ok', list: 'ok', watch: 'ok', getSensitive: 'ok', listSensitive: 'ok', watchSensitive: 'ok' },
    operator: {
      get: 'ok', list: 'ok', watch: 'ok',
      getSensitive: 'permission-denied', listSensitive: 'permission-denied', watchSensitive: 'permission-denied',
    },
    reader: {
      get: 'ok', list: 'ok', watch: 'ok',
      getSensitive: 'permission-denied', listSensitive: 'permission-denied', watchSensitive: 'permission-denied',
    },
  };
  for (const role of ROLES) {
    const c = clients[role];
    const got = {
      get: await outcome(() => c.get(version)), list: await outcome(() => c.list(version)),
      watch: await outcome(() => watchOnce(c, version)),
      getSensitive: await outcome(() => c.get(ca)), listSensitive: await outcome(() => c.list(ca)),
      watchSensitive: await outcome(() => watchOnce(c, ca)),
    };
    t.same(got, want[role], role);
  }
});

t.test('writes: users\' types by admins and operators, admin types by admins, statuses by nobody', async (t) => {
  const want: Record<Role, Record<string, string>> = {
    admin: {
      create: 'ok', update: 'ok', teardown: 'ok', destroy: 'ok', teardownAndDestroy: 'ok',
      createAdmin: 'ok', destroyAdmin: 'ok', createStatus: 'permission-denied', updateStatus: 'permission-denied',
      destroyStatus: 'permission-denied', asController: 'permission-denied',
    },
    operator: {
      create: 'ok', update: 'ok', teardown: 'ok', destroy: 'ok', teardownAndDestroy: 'ok',
      createAdmin: 'permission-denied', destroyAdmin: 'permission-denied', createStatus: 'permission-denied',
      updateStatus: 'permission-denied', destroyStatus: 'permission-denied', asController: 'permission-denied',
    },
    reader: {
      create: 'permission-denied', update: 'permission-denied', teardown: 'permission-denied',
      destroy: 'permission-denied', teardownAndDestroy: 'permission-denied', createAdmin: 'permission-denied',
      destroyAdmin: 'permission-denied', createStatus: 'permission-denied', updateStatus: 'permission-denied',
      destroyStatus: 'permission-denied', asController: 'permission-denied',
    },
  };
  const admin = clients.admin;
  for (const role of ROLES) {
    const c = clients[role];
    // Fixtures made by an admin, so every role meets the same resources.
    for (const id of [`${role}-u`, `${role}-d`, `${role}-td`]) {
      await admin.create(newResource(motd(id), { text: 'fixture' })).catch(() => undefined);
    }
    await admin.create(newResource(limits, { maxConnections: 300 })).catch(() => undefined);
    const current = await admin.get(motd(`${role}-u`));
    const v = await admin.get(version);
    const got = {
      create: await outcome(() => c.create(newResource(motd(`${role}-new`), { text: 'hi' }))),
      update: await outcome(() => c.update({ ...current, spec: { text: 'changed' } })),
      teardown: await outcome(() => c.teardown(motd(`${role}-d`))),
      destroy: await outcome(() => c.destroy(motd(`${role}-d`))),
      teardownAndDestroy: await outcome(() => c.teardownAndDestroy(motd(`${role}-td`))),
      createAdmin: await outcome(() => c.create(newResource({ ...limits, id: `x-${role}` }, { maxConnections: 99 }))),
      destroyAdmin: await outcome(() => c.destroy({ ...limits, id: `x-${role}` }).then(() => c.destroy(limits))),
      createStatus: await outcome(() => c.create(newResource({ ...version, id: `forged-${role}` }, {}))),
      updateStatus: await outcome(() => c.update({ ...v, spec: { ...(v.spec as object), version: '9.9' } },
        { owner: v.metadata.owner })),
      destroyStatus: await outcome(() => c.destroy(version, { owner: v.metadata.owner })),
      asController: await outcome(() => c.create(newResource(motd(`${role}-owned`), { text: 'x' }),
        { owner: 'issue-status' })),
    };
    t.same(got, want[role], role);
  }
  t.ok(await admin.get(version), 'the status is untouched');
});

/** The audit log as `cosictl logs audit` prints it. */
async function auditLog(): Promise<string> {
  const r = await runProgram(join(artifacts().dir, 'cosictl'), ['--config', served.cosictlConfig, 'logs', 'audit']);
  if (r.code !== 0) throw new Error(`cosictl logs audit: exit ${r.code}: ${r.err}`);
  return r.out;
}

t.test('the machine config service: admins and operators apply; an operator cannot touch admin types', async (t) => {
  const apply = (c: RemoteState, yaml: string, mode: 'merge' | 'replace' = 'merge') => outcome(() => c.unary(
    CONFIG_RPC.applyConfig.path, CONFIG_RPC.applyConfig.request.encode({
      config: Buffer.from(yaml), mode, dryRun: false, trySeconds: 0, sourceName: 'test',
    }),
  ));
  const confirmConfig = CONFIG_RPC.confirmConfig;
  const confirm = (c: RemoteState) => outcome(() => c.unary(confirmConfig.path, confirmConfig.request.encode({})));
  const doc = (id: string) => `metadata: {type: motd, id: ${id}}\nspec: {text: applied}\n`;
  const adminDoc = 'metadata: {type: apilimits, id: api}\nspec: {maxConnections: 500}\n';
  t.same({
    admin: await apply(clients.admin, doc('by-admin')), operator: await apply(clients.operator, doc('by-operator')),
    reader: await apply(clients.reader, doc('by-reader')),
  }, { admin: 'ok', operator: 'ok', reader: 'permission-denied' }, 'ApplyConfig');
  t.same({
    admin: await apply(clients.admin, adminDoc), operator: await apply(clients.operator, adminDoc),
  }, { admin: 'ok', operator: 'permission-denied' }, 'ApplyConfig naming an admin type');
  // An operator's replace leaves what it may not write (the limits, the CA) as it is.
  t.equal(await apply(clients.operator, doc('only-this'), 'replace'), 'ok');
  t.match((await clients.admin.get(limits)).spec, { maxConnections: 500 }, 'the admin type stayed');
  t.ok(await clients.admin.get(ca), 'the CA stayed');
  t.same({
    admin: await confirm(clients.admin), operator: await confirm(clients.operator),
    reader: await confirm(clients.reader),
  }, { admin: 'failed-precondition', operator: 'failed-precondition', reader: 'permission-denied' },
  'ConfirmConfig (nothing to confirm: past the role check)');
});

t.test('clients the machine refuses are told why by every call, and may do nothing', async (t) => {
  const foreign = generateSecrets();
  const key = generateKey();
  /** A client certificate from the machine's CA with these Organizations and dates. */
  const issued = (organization: string[], notBefore: Date, notAfter: Date) => new RemoteState(
    `127.0.0.1:${served.port}`, { tls: { ...served.tls('admin'), key: keyToPem(key), cert: issueCertificate({
      subject: { commonName: 'nobody', organization }, publicKey: createPublicKey(key),
      issuer: { certificate: served.secrets.ca.certificate, key: createPrivateKey(served.secrets.ca.key) },
      usage: 'client', notBefore, notAfter,
    }) } },
  );
  const hour = 3600_000;
  const attempts: [string, RemoteState, RegExp][] = [
    ['no certificate', new RemoteState(`127.0.0.1:${served.port}`, { tls: { ca: served.secrets.ca.certificate } }),
      /^this machine requires a client certificate .*, and this client sent none$/],
    ['a certificate from another CA', new RemoteState(`127.0.0.1:${served.port}`, {
      tls: { ...served.tls('admin'), cert: foreign.clients.admin.certificate, key: foreign.clients.admin.key },
    }), /^the machine refused this client's certificate: .* is not signed by a CA this machine accepts \(\w+\)$/],
    // From the right CA: admitted by the chain check, then refused for its Organization or its dates.
    ['a certificate that names no role', issued(['sales'], new Date(0), new Date(Date.now() + hour)),
      /^the machine refused this client's certificate: certificate "O=sales,CN=nobody" names no role/],
    ['an expired certificate', issued(['admin'], new Date(0), new Date(Date.now() - hour)),
      /^the machine refused this client's certificate: .* expired 20\d\d-[\d-]+T[\d:]+Z, by the machine's clock, /],
    ['a certificate not valid yet', issued(['admin'], new Date(Date.now() + hour), new Date(Date.now() + 2 * hour)),
      /^the machine refused this client's certificate: .* is not valid before 20\d\d-[\d-]+T[\d:]+Z, by the machine/],
  ];
  for (const [what, c, why] of attempts) {
    const e = await c.get(version).then(() => undefined, (x: Error) => x);
    t.match(e, { code: 'unauthenticated', message: why }, what);
    const w = await c.create(newResource(motd(`refused-${what.length}`), { text: 'x' })).then(() => 'written',
      (x: StateError) => x.code);
    t.equal(w, 'unauthenticated', `${what}: nothing written`);
    c.close();
  }
  t.match(served.log(), /refused 127\.0\.0\.1: this machine requires a client certificate/,
    'the first refusal, logged');
  t.match(await auditLog(),
    /audit: caller="O=sales,CN=nobody" refused rpc=State\/Get .*result=denied: the machine refused /,
    'each refused call is audited');
});

t.test('every write and every refusal is one audit line naming subject, role, RPC, resource and result', async (t) => {
  await clients.operator.create(newResource(motd('audited'), { text: 'x' }));
  await clients.reader.create(newResource(motd('audited-2'), { text: 'x' })).catch(() => undefined);
  await clients.reader.get(ca).catch(() => undefined);
  await clients.operator.unary(CONFIG_RPC.applyConfig.path, CONFIG_RPC.applyConfig.request.encode({
    config: Buffer.from('metadata: {type: motd, id: dry}\nspec: {text: x}\n'), mode: 'merge', dryRun: true,
    trySeconds: 0, sourceName: 'diff',
  }));
  await until(async () => /State\/Get resource=security/.test(await auditLog()), true);
  const log = await auditLog();
  const literal = (p: string) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const line = (...parts: string[]) => new RegExp(parts.map(literal).join(' '));
  t.match(log, line('audit: subject="O=operator,CN=cosictl-operator" role=operator rpc=State/Create',
    'resource=config/Motds.config.appliance.dev/audited result=ok'));
  t.match(log, line('audit: subject="O=reader,CN=cosictl-reader" role=reader rpc=State/Create',
    'resource=config/Motds.config.appliance.dev/audited-2 result=denied: the reader role may not write'));
  t.match(log, line('audit: subject="O=reader,CN=cosictl-reader" role=reader rpc=State/Get',
    'resource=security/ApiCertificateAuthorities.security.appliance.dev/api result=denied:',
    'ApiCertificateAuthorities.security.appliance.dev is sensitive: admins only'));
  t.match(log, line('role=operator rpc=ConfigService/ApplyConfig resource=machine-config mode=merge dry-run result=ok'),
    'a dry run (diff) is told from an apply');
  t.notMatch(log, /BEGIN PRIVATE KEY/, 'no secret in the log');
  t.notMatch(served.log(), /audit:/, 'the console keeps its summary lines: no audit line there');
});
