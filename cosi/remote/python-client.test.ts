// Interop: an independent client (Python grpcio, C-core) with message classes that
// protoc generated from proto/, against the built engine.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifacts } from '../../qemu/artifacts.ts';
import { startServe } from '../../init/engine/serve-harness.ts';
import { SPEC_FILES, WIRE_FILES } from '../../scripts/gen-proto.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const gen = mkdtempSync(join(tmpdir(), 'cosi-py-'));
execFileSync('protoc', [
  '-I', join(root, 'proto'), '-I', '/usr/include', `--python_out=${gen}`, ...WIRE_FILES, ...SPEC_FILES(),
]);
const served = await startServe(artifacts().exe, ['--no-plugins']);
t.teardown(() => served.stop());

let out = '';
let code = 0;
try {
  // Debian's python3 has the grpcio and protobuf packages that install-host-deps.sh installs.
  const pem = (name: string, text: string) => {
    const p = join(gen, name);
    writeFileSync(p, text);
    return p;
  };
  const admin = served.tls('admin');
  out = execFileSync('/usr/bin/python3', [
    fileURLToPath(new URL('python_client_check.py', import.meta.url)), gen, `127.0.0.1:${served.port}`,
    pem('ca.pem', admin.ca!), pem('cert.pem', admin.cert!), pem('key.pem', admin.key!),
  ], { encoding: 'utf8', timeout: 60_000 });
} catch (e) {
  out = String((e as { stdout?: string }).stdout ?? '');
  code = (e as { status?: number }).status ?? 1;
}

for (const line of out.trim().split('\n')) {
  const m = /^(ok|FAIL) ([^:]+)(?::\s*(.*))?$/.exec(line);
  if (m) t.ok(m[1] === 'ok', m[2]!, m[3] ? { why: m[3] } : {});
}
t.equal(code, 0, 'the Python client exited 0');
t.ok(out.split('\n').filter((l) => l.startsWith('ok ')).length >= 28, 'all checks ran');
