// cosictl end to end: the built client executable against the built engine
// (`appliance serve`) over a real socket.
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createSecureServer, type ServerHttp2Stream } from 'node:http2';
import { createPublicKey } from 'node:crypto';
import YAML from 'yaml';
import { generateKey, issueCertificate, keyToPem } from '../machinery/pki/certificate.ts';
import { connect as netConnect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { artifacts } from '../qemu/artifacts.ts';
import { startServe } from '../init/engine/serve-harness.ts';
import { runProgram, type Ran } from '../scripts/lib/run-program.ts';

const a = artifacts();
const cosictl = join(a.dir, 'cosictl');
const served = await startServe(a.exe);
t.teardown(() => served.stop());
const endpoint = `127.0.0.1:${served.port}`;
const dir = mkdtempSync(join(tmpdir(), 'cosictl-test-'));

function run(args: string[], input?: string): Promise<Ran> {
  return runProgram(cosictl, ['--config', served.cosictlConfig, ...args],
    { timeoutMs: 30_000, ...(input !== undefined ? { input } : {}) });
}
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

t.test('get: table from print columns, yaml, json, aliases', async (t) => {
  const table = await run(['get', 'versions']);
  t.equal(table.code, 0, table.err);
  t.match(table.out, /^NAMESPACE\s+TYPE\s+ID\s+VERSION\s+APPLIANCE\s+COMMIT\s+KERNEL/);
  t.match(table.out, /runtime\s+Version\s+appliance\s+1\s+0\.1\.0/);
  const yaml = await run(['get', 'version', 'appliance', '-o', 'yaml']);
  t.match(yaml.out, /metadata:\n\s+namespace: runtime\n\s+type: Versions.runtime.appliance.dev\n\s+id: appliance/);
  t.match(yaml.out, /spec:\n\s+version: 0.1.0/);
  const json = JSON.parse(
    (await run(['get', 'Versions.runtime.appliance.dev', 'appliance', '-o', 'json'])).out,
  ) as { spec: { version: string } };
  t.equal(json.spec.version, '0.1.0');
  const res = await run(['api-resources']);
  t.match(res.out, /Motds.config.appliance.dev\s+motd\s+config/);
  t.match(res.out, /Namespaces.meta.cosi.dev\s+ns,namespace\s+meta/);
});

t.test('apply: create, unchanged, configured; labels select', async (t) => {
  const f = file(
    'motd.yaml',
    'metadata: {type: motd, id: hello, labels: {team: a}}\nspec: {text: Hello}\n---\n'
      + 'metadata: {type: motd, id: other}\nspec: {text: Other, priority: 1}\n',
  );
  const first = await run(['apply', '-f', f]);
  t.equal(first.code, 0, first.err);
  t.equal(first.out, 'motd/hello created\nmotd/other created\n');
  t.equal((await run(['apply', '-f', f])).out, 'motd/hello unchanged\nmotd/other unchanged\n');
  const changed = await run(
    ['apply', '-f', '-'], 'metadata: {type: motd, id: hello, labels: {team: a}}\nspec: {text: Hello again}\n',
  );
  t.equal(changed.out, 'motd/hello configured\n');
  const sel = await run(['get', 'motd', '-l', 'team=a']);
  t.match(sel.out, /hello/);
  t.notMatch(sel.out, /other/);
  t.match((await run(['get', 'motd', '-l', '!team'])).out, /other/);
  t.match((await run(['get', 'issues', 'banner', '-o', 'yaml'])).out, /Hello again/, 'the issue plugin picked it up');
});

t.test('apply: a bad document refuses the whole input, naming document, field and reason', async (t) => {
  const f = file(
    'bad.yaml',
    'metadata: {type: motd, id: fine}\nspec: {text: ok}\n---\n'
      + 'metadata: {type: motd, id: broken}\nspec: {text: 12}\n---\n'
      + 'metadata: {type: nosuch, id: x}\nspec: {}\n',
  );
  const r = await run(['apply', '-f', f]);
  t.equal(r.code, 3, 'exit 3: invalid input');
  t.match(r.err, /bad.yaml: document 2 \(Motd broken\): spec.text: must be a string, got 12/);
  t.match(r.err, /document 3 \(nosuch x\): metadata.type: unknown resource type "nosuch"/);
  t.match(r.err, /nothing applied: 2 problem\(s\)/);
  t.equal((await run(['get', 'motd', 'fine'])).code, 4, 'the valid document was not applied either');
  const owned = await run(['apply', '-f', '-'], 'metadata: {type: issue, id: banner}\nspec: {text: mine}\n');
  t.equal(owned.code, 3);
  t.match(owned.err, /managed by "issue-status"/);
});

t.test('get --watch prints +, blank and - marks', async (t) => {
  const w = spawn(cosictl, ['--config', served.cosictlConfig, 'get', 'motd', '--watch']);
  let out = '';
  w.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  const waitFor = async (re: RegExp) => {
    for (let i = 0; i < 200 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 25));
    return re.test(out);
  };
  t.ok(await waitFor(/\+\s+config\s+Motd\s+hello/), 'existing resources as + on start');
  await run(['apply', '-f', '-'], 'metadata: {type: motd, id: watched}\nspec: {text: one}\n');
  t.ok(await waitFor(/\+\s+config\s+Motd\s+watched\s+1/), 'created: +');
  await run(['apply', '-f', '-'], 'metadata: {type: motd, id: watched}\nspec: {text: two}\n');
  t.ok(await waitFor(/\n\s+config\s+Motd\s+watched\s+2/), 'updated: blank mark');
  await run(['delete', 'motd', 'watched']);
  t.ok(await waitFor(/-\s+config\s+Motd\s+watched/), 'destroyed: -');
  w.kill('SIGINT');
  const code = await new Promise<number | null>((r) => w.on('exit', (c) => r(c)));
  t.equal(code, 0, 'Ctrl-C ends the watch with exit 0');
});

t.test('exit codes scripts can trust', async (t) => {
  t.equal((await run(['get', 'motd', 'nope'])).code, 4, 'not found');
  t.equal((await run(['get', 'nosuchtype'])).code, 4, 'unknown type');
  t.equal((await run(['frobnicate'])).code, 2, 'unknown command');
  t.equal((await run(['get', 'motd', '--bogus'])).code, 2, 'unknown flag');
  t.equal((await run(['get', 'motd', '-o', 'xml'])).code, 2, 'bad output format');
  t.equal((await run(['delete', 'issues', 'banner'])).code, 1, 'controller-managed resource');
  const unreachable = await new Promise<number>((r) => execFile(cosictl,
    ['--config', served.cosictlConfig, '-e', '127.0.0.1:1', 'get', 'motd'],
    (e) => r((e as { code?: number } | null)?.code ?? 0)));
  t.equal(unreachable, 5, 'unreachable');
  for (const cmd of [[], ['get'], ['apply'], ['delete']]) {
    const r = await run([...cmd, '--help']);
    t.equal(r.code, 0, `${cmd.join(' ') || 'cosictl'} --help`);
    t.match(r.out, /usage: cosictl/);
  }
});

t.test('delete --purge-volumes: said on the extension spec before it goes; any other type refused', async (t) => {
  const sha = 'c'.repeat(64);
  t.equal((await run(['apply', '-f', '-'], `metadata: {type: extensions, id: web}\nspec: {source: /x.squashfs, `
    + `sha256: ${sha}}\n`)).code, 0);
  const w = spawn(cosictl, ['--config', served.cosictlConfig, 'get', 'extensionspec', '--watch', '-o', 'yaml']);
  let out = '';
  w.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  for (let i = 0; i < 200 && !/id: web/.test(out); i++) await new Promise((r) => setTimeout(r, 25));
  const other = await run(['delete', 'motd', 'hello', '--purge-volumes']);
  t.equal(other.code, 2, other.err);
  t.match(other.err, /--purge-volumes: only extension specs have volumes; nothing deleted/);
  const purged = await run(['delete', 'extensionspec', 'web', '--purge-volumes']);
  t.equal(purged.code, 0, purged.err);
  t.equal(purged.out, 'extension/web deleted, its volumes purged\n');
  for (let i = 0; i < 200 && !/type: DESTROYED|destroyed/i.test(out); i++) await new Promise((r) => setTimeout(r, 25));
  w.kill('SIGINT');
  await new Promise((r) => w.on('exit', r));
  t.match(out, /extensions\.appliance\.dev\/purge-volumes: "true"/, 'the engine saw the annotation before the delete');
  t.equal((await run(['get', 'motd', 'hello'])).code, 0, 'the motd is still there');
});

t.test('--timeout: a machine that takes calls but never answers is given up on, as unreachable', async (t) => {
  // A real HTTP/2 server over TLS that accepts every stream and never responds (a machine whose link went
  // down mid-call); its self-signed certificate is taken as a machine in maintenance mode's would be.
  const key = generateKey();
  const silent = createSecureServer({
    key: keyToPem(key), cert: issueCertificate({
      subject: { commonName: 'silent' }, publicKey: createPublicKey(key), selfKey: key, usage: 'server',
      notBefore: new Date(0), notAfter: new Date(Date.now() + 3600_000),
    }),
  });
  const streams: ServerHttp2Stream[] = [];
  silent.on('stream', (s) => {
    streams.push(s);
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of streams) s.destroy();
    silent.close();
  });
  const port = (silent.address() as AddressInfo).port;
  const started = Date.now();
  const r = await new Promise<{ code: number; err: string }>((res) => execFile(
    cosictl, ['--insecure', '-e', `127.0.0.1:${port}`, '--timeout', '1s', 'get', 'versions'], { timeout: 20_000 },
    (e, _out, err) => res({ code: (e as { code?: number } | null)?.code ?? 0, err }),
  ));
  t.equal(r.code, 5, r.err);
  t.match(r.err, /within 1000 ms/);
  t.ok(Date.now() - started < 10_000, 'gave up after about the timeout');
  t.equal((await run(['--timeout', 'soon', 'get', 'versions'])).code, 2, 'a bad duration is a usage error');

  // The link goes down mid-call: a proxy (QEMU's user network in front of a guest) stops carrying bytes
  // and holds the connection open. cosictl gives up and exits; it does not wait for a goodbye nobody reads.
  let linkDown = false;
  const held: Socket[] = [];
  const proxy = createNetServer({ allowHalfOpen: true }, (client) => {
    held.push(client);
    const upstream = netConnect(port, '127.0.0.1');
    held.push(upstream);
    // Once down, the proxy reads no more from either side and sends nothing: no data, no FIN.
    client.on('data', (b) => {
      if (linkDown) client.pause();
      else upstream.write(b);
    });
    upstream.on('data', (b) => {
      if (linkDown) upstream.pause();
      else client.write(b);
    });
  });
  silent.on('stream', () => {
    linkDown = true;
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of held) s.destroy();
    proxy.close();
  });
  const cut = Date.now();
  const lost = await new Promise<{ code: number; err: string }>((res) => execFile(cosictl,
    ['--insecure', '-e', `127.0.0.1:${(proxy.address() as AddressInfo).port}`, '--timeout', '1s', 'get', 'versions'],
    { timeout: 20_000 }, (e, _out, err) => {
      const x = e as { code?: number; killed?: boolean; signal?: string } | null;
      res({ code: x?.killed ? -1 : x?.code ?? 0, err: x?.killed ? `killed (${x.signal}) after 20 s: ${err}` : err });
    }));
  t.ok(linkDown, 'the call reached the machine before its link went down');
  t.equal(lost.code, 5, lost.err);
  t.match(lost.err, /within 1000 ms/);
  t.ok(Date.now() - cut < 10_000, `exited ${Date.now() - cut} ms after it started, with the connection still open`);
});

t.test('a config file supplies the endpoint and the credentials; without a CA it says what to do', async (t) => {
  const creds = served.tls('reader');
  const cfg = file('config.yaml', YAML.stringify({
    context: 'test', contexts: { test: { endpoint, ca: creds.ca, cert: creds.cert, key: creds.key, endpiont: 'x' } },
  }));
  const r = await new Promise<{ code: number; out: string; err: string }>((res) => execFile(
    cosictl, ['--config', cfg, 'get', 'versions'], (e, out, err) => res({ code: e ? 1 : 0, out, err }),
  ));
  t.equal(r.code, 0, r.err);
  t.match(r.out, /appliance/);
  t.match(r.err, /context "test": unknown key "endpiont" ignored/, 'a misspelt key is warned about');
  const noCa = file('no-ca.yaml', `contexts:\n  bare:\n    endpoint: ${endpoint}\n`);
  const bare = await new Promise<{ code: number; err: string }>((res) => execFile(
    cosictl, ['--config', noCa, 'get', 'versions'], (e, _o, err) => res({ code: e ? 1 : 0, err }),
  ));
  t.match(bare.err, /has no `ca` \(make one with `cosictl gen config --secrets`\), or use --insecure/);
  const bad = await new Promise<number>((res) => execFile(
    cosictl, ['--config', cfg, '--context', 'nope', 'get', 'versions'],
    (e) => res((e as { code?: number } | null)?.code ?? 0),
  ));
  t.equal(bad, 2, 'unknown context is a usage error');
  // A file named by $COSICTL_CONFIG that is not there is said so, not "a context without a CA".
  const gone = join(dirname(cfg), 'no-such-config.yaml');
  const missing = await new Promise<{ code: number; err: string }>((res) => execFile(cosictl, ['get', 'versions'],
    { env: { ...process.env, COSICTL_CONFIG: gone } }, (e, _o, err) => res({ code: e?.code as number ?? 0, err })));
  t.same(missing, { code: 2, err: `cosictl: $COSICTL_CONFIG names ${gone}: no such file\n` });
  // No file where the default is: that, not a context, is what lacks the CA.
  const home = await new Promise<{ code: number; err: string }>((res) => execFile(cosictl, ['get', 'versions'],
    { env: { ...process.env, COSICTL_CONFIG: undefined, XDG_CONFIG_HOME: join(dirname(cfg), 'empty-home') } },
    (e, _o, err) => res({ code: e?.code as number ?? 0, err })));
  t.equal(home.code, 2);
  // A context from another CA: the machine answered, and this client refused its certificate (exit 6, not 5).
  const otherKey = generateKey();
  const otherCa = issueCertificate({
    subject: { commonName: 'another CA' }, publicKey: createPublicKey(otherKey), selfKey: otherKey, usage: 'ca',
    notBefore: new Date(0), notAfter: new Date(Date.now() + 3600_000),
  });
  const other = file('other-ca.yaml', YAML.stringify({
    context: 'o', contexts: { o: { endpoint, ca: otherCa, cert: creds.cert, key: creds.key } },
  }));
  const wrongCa = await new Promise<{ code: number; err: string }>((res) => execFile(cosictl,
    ['--config', other, 'get', 'versions'], (e, _o, err) => res({ code: e?.code as number ?? 0, err })));
  t.equal(wrongCa.code, 6, wrongCa.err);
  t.match(wrongCa.err, /TLS: the machine's certificate is not signed by this context's CA: the context is for /);
  t.match(home.err, /no CA to check 127\.0\.0\.1:50000 with: there is no config file at .*empty-home\/cosictl\//);
});

t.test('kubectl\'s output habits: json List, name, wide, labels, sort, jsonpath, and an empty result', async (t) => {
  await run(['apply', '-f', '-'], [
    'metadata: {type: motd, id: out-b, labels: {team: b, tier: web}}', 'spec: {text: B, priority: 2}', '---',
    'metadata: {type: motd, id: out-a, labels: {team: a}}', 'spec: {text: A, priority: 10}', '',
  ].join('\n'));
  const sel = ['-l', 'team in (a,b)', '--id-regexp', '^out-'];
  const list = JSON.parse((await run(['get', 'motd', ...sel, '-o', 'json'])).out) as {
    kind: string; items: { metadata: { id: string } }[];
  };
  t.equal(list.kind, 'List', 'several resources are one JSON document');
  t.same(list.items.map((i) => i.metadata.id).sort(), ['out-a', 'out-b']);
  t.match(JSON.parse((await run(['get', 'motd', 'out-a', '-o', 'json'])).out), { metadata: { id: 'out-a' } },
    'one asked for by id is the resource itself');
  t.equal((await run(['get', 'motd', ...sel, '-o', 'name', '--sort-by', '{.metadata.id}'])).out,
    'motd/out-a\nmotd/out-b\n');
  t.equal((await run(['get', 'motd', ...sel, '-o', 'name', '--sort-by', '.spec.priority'])).out,
    'motd/out-b\nmotd/out-a\n', 'numbers sort as numbers (2 before 10)');
  const wide = (await run(['get', 'motd', 'out-a', '-o', 'wide'])).out;
  t.match(wide, /^NAMESPACE\s+TYPE\s+ID\s+VERSION\s.*\sOWNER\s+PHASE\s+AGE\n/);
  t.match(wide, /out-a\s.*running\s+\d+s\n$/);
  const labels = (await run(['get', 'motd', ...sel, '--show-labels', '-L', 'team', '--sort-by', '{.metadata.id}'])).out;
  t.match(labels, /\sTEAM\s+LABELS\n/);
  t.match(labels, /out-a\s.*\sa\s+team=a\n/);
  t.match(labels, /out-b\s.*\sb\s+team=b,tier=web\n/);
  t.equal((await run(['get', 'motd', ...sel, '--sort-by', '{.metadata.id}', '-o',
    'jsonpath={range .items[*]}{.metadata.id}={.spec.text}{"\\n"}{end}'])).out, 'out-a=A\nout-b=B\n');
  t.equal((await run(['get', 'motd', ...sel, '--sort-by', '{.metadata.id}', '-o',
    'jsonpath={.items[*].metadata.id}'])).out, 'out-a out-b');
  const none = await run(['get', 'motd', '-l', 'team=nobody']);
  t.same([none.code, none.out, none.err], [0, '', 'No resources found in config namespace.\n']);
  const bad = await run(['get', 'motd', '-o', 'xml']);
  t.equal(bad.code, 2);
  t.match(bad.err, /--output: expected table, wide, yaml \(or yml\), json, name or jsonpath=TEMPLATE, got "xml"/);
  t.match((await run(['get', 'motd', '-o', 'yaml', '--show-labels'])).err, /use them with -o table or -o wide/);
});

t.test('get --watch: the table lines up with its header; yaml and json say which event', async (t) => {
  const watch = (args: string[]) => {
    const w = spawn(cosictl, ['--config', served.cosictlConfig, 'get', 'motd', '--watch', ...args]);
    let out = '';
    w.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    return {
      text: () => out,
      until: async (re: RegExp) => {
        for (let i = 0; i < 200 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 25));
        return re.test(out);
      },
      stop: () => {
        w.kill('SIGINT');
        return new Promise((r) => w.on('exit', r));
      },
    };
  };
  const table = watch([]);
  t.ok(await table.until(/out-b/), 'the resources there already');
  await run(['apply', '-f', '-'], 'metadata: {type: motd, id: a-much-longer-id-than-any-before}\nspec: {text: x}\n');
  t.ok(await table.until(/a-much-longer-id/));
  await table.stop();
  const lines = table.text().trimEnd().split('\n');
  const versionAt = lines[0]!.indexOf('VERSION');
  // The rows there at the start share the header's widths; the later, longer id may widen its column.
  for (const l of lines.slice(1, -1)) t.match(l.slice(versionAt - 1), /^ \d+( |$)/, `VERSION lines up: ${l}`);
  t.ok(lines.length > 3, `${lines.length - 2} rows at the start`);
  const json = watch(['-o', 'json']);
  t.ok(await json.until(/"type":"created"/));
  await json.stop();
  const first = JSON.parse(json.text().split('\n')[0]!) as { type: string; resource: { metadata: { type: string } } };
  t.match(first, { type: 'created', resource: { metadata: { type: 'Motds.config.appliance.dev' } } });
  const yaml = watch(['-o', 'yaml']);
  t.ok(await yaml.until(/type: created\nresource:\n/));
  await yaml.stop();
  await run(['delete', 'motd', 'a-much-longer-id-than-any-before']);
});

t.test('install: the request validated, followed to its end; on a host it is refused and says so', async (t) => {
  const refused = await run(['install', '--disk', '/dev/sda', '--size', '>= 1GiB', '--id', 'host']);
  t.equal(refused.code, 1, refused.err);
  t.match(refused.err, /install "host": refused: this engine runs on a host \(serve\): it installs nothing/);
  const status = (await run(['get', 'installstatus', 'host', '-o', 'yaml'])).out;
  t.match(status, /phase: failed/);
  t.match(status, /diskTouched: false/);
  const bad = await run(['install', '--size', 'huge']);
  t.equal(bad.code, 2, 'refused before the machine is asked');
  t.match(bad.err, /^cosictl: --size: size "huge": want an optional comparison \(<, <=, >, >=, ==\) and/);
  const usage = await run(['install']);
  t.equal(usage.code, 2);
  t.match(usage.err, /name the disk with --disk, --serial, --model or --size/);
  t.match((await run(['get', 'versions', '--wipe'])).err, /--wipe is not a flag of get \(install takes it\)/);
  t.match((await run(['install', '--help'])).out, /^usage: cosictl install/);
});
