// cloud-init input read as cloud-init reads it: PyYAML's YAML 1.1, write_files modes and
// !!binary content, Jinja templates rendered from the instance data, single-part MIME.
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { jinjaRenderer, noJinja, type InstanceData } from './jinja.ts';
import { translateUserData, translateUserDataWith } from './user-data.ts';
import { octalMode } from './write-files.ts';
import { parsePyYaml, parseYaml } from '../safe-yaml.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const data: InstanceData = {
  v1: { local_hostname: 'node7', 'local-hostname': 'node7', region: 'eu-west-1', cloud_name: 'nocloud' },
  ds: { meta_data: { 'instance-id': 'iid-7', rack: { row: 'b' } } },
};

t.test('YAML 1.1 as PyYAML reads it; our own documents stay YAML 1.2', async (t) => {
  const text = 'a: 0600\nb: yes\nc: off\nd: 0o600\ne: 010\nf: !!binary aGVsbG8=\n';
  const p = parsePyYaml(text);
  t.same(p.ok && { ...(p.value as object), f: Buffer.from((p.value as { f: Uint8Array }).f).toString() },
    { a: 384, b: true, c: false, d: '0o600', e: 8, f: 'hello' });
  const ours = parseYaml('a: 0600\nb: yes\n');
  t.same(ours.ok && ours.value, { a: 600, b: 'yes' }, 'YAML 1.2 for our own formats');
  t.notOk(parseYaml('a: 1\na: 2\n').ok, 'our formats refuse a duplicated key');
  const dup = parsePyYaml('a: 1\nb:\n  c: 1\n  c: 2\na: 3\n');
  t.same(dup.ok && [dup.value, dup.warnings], [{ a: 3, b: { c: 2 } }, [
    'line 4: the key "c" appears again in its mapping: the last value is used, as cloud-init does',
    'line 5: the key "a" appears again in its mapping: the last value is used, as cloud-init does',
  ]]);
});

t.test('write_files permissions follow cloud-init: an integer is the mode, a string is octal', async (t) => {
  t.equal(octalMode(420), '0644', 'decimal 420 is 0644');
  t.equal(octalMode(384), '0600', 'an unquoted 0600 (YAML 1.1: 384)');
  t.equal(octalMode('0o600'), '0600');
  t.equal(octalMode('0600'), '0600');
  t.equal(octalMode('644'), '0644');
  t.match((octalMode(644) as Error).message, /the integer 644 is mode 01204: write "0644" or 0o644/);
  t.match((octalMode('rw-r--r--') as Error).message, /"rw-r--r--" are not a mode/);
  const r = translateUserDataWith(enc(`#cloud-config
write_files:
  - {path: /run/a, content: x, permissions: 0600}
  - {path: /run/b, content: x, permissions: 420}
  - {path: /run/c, content: x, permissions: 0o640}
  - path: /run/d
    encoding: gzip
    content: !!binary ${gzipSync('packed text\n').toString('base64')}
  - path: /run/e
    content: !!binary AAEC/w==
  - {path: /run/f, content: plain, encoding: rot13}
`), noJinja);
  if (!r.ok) throw new Error(r.message);
  t.match(r.data.config, /path: \/run\/a\n\s+content: x\n\s+mode: "0600"/);
  t.match(r.data.config, /path: \/run\/b\n\s+content: x\n\s+mode: "0644"/);
  t.match(r.data.config, /path: \/run\/c\n\s+content: x\n\s+mode: "0640"/);
  t.match(r.data.config, /path: \/run\/d\n\s+content: \|\n\s+packed text\n/, '!!binary gzip undone');
  t.match(r.data.config, /path: \/run\/e\n\s+content: AAEC\/w==\n\s+encoding: base64/, 'binary kept as base64');
  t.match(r.data.ignored.join('\n'),
    /write_files\[5\] \/run\/f: encoding "rot13" is not one cloud-init knows: written as/);
});

t.test('Jinja user data is rendered from the instance data; what cannot be rendered names its line', async (t) => {
  const tpl = `## template: jinja
#cloud-config
hostname: {{ v1.local_hostname }}-{{ ds.meta_data.rack.row }}
fqdn: {{ local_hostname }}.{{ v1.region | default("nowhere") }}.example.net
{% if ds.meta_data.instance_id == "iid-7" %}ntp: {servers: [192.0.2.123]}{% endif %}
`;
  const r = await translateUserData(enc(tpl), data);
  if (!r.ok) throw new Error(r.message);
  t.equal(r.data.format, 'cloud-config');
  t.match(r.data.config, /hostname: node7-b\n\s+domainname: eu-west-1.example.net/);
  t.match(r.data.config, /servers:\n\s+- 192.0.2.123/, 'a dashed key is also under its underscore name');
  const missing = await translateUserData(enc('## template: jinja\n#cloud-config\nhostname: {{ v1.nope }}\n'), data);
  t.match(!missing.ok && missing.message,
    /line 3: a variable that has no value in the instance data \(hostname: \{\{ v1.nope \}\}\)/);
  const syntax = await translateUserData(enc('## template: jinja\n#cloud-config\n{% for %}\n'), data);
  t.match(!syntax.ok && syntax.message, /cannot be rendered: line 3: unexpected token/);
  const escape = await translateUserData(
    enc('## template: jinja\n{{ range.constructor("return process")() }}\n'), data);
  t.match(!escape.ok && escape.message, /line 2: .* names a JavaScript internal/);
  const include = await translateUserData(enc('## template: jinja\n{% include "/etc/passwd" %}\n'), data);
  t.match(!include.ok && include.message, /line 2: \{% include %\} loads another template/);
  const none = translateUserDataWith(enc(tpl), noJinja);
  t.match(!none.ok && none.message, /a Jinja template, and no instance data/);
  const render = await jinjaRenderer(data);
  t.same(render('## template: jinja\n{{ v1["local-hostname"] }}\n'), { ok: true, text: 'node7\n' });
});

t.test('MIME: a single part with headers, and a Jinja part of a multipart', async (t) => {
  const single = 'Content-Type: text/cloud-config; charset="us-ascii"\nMIME-Version: 1.0\n'
    + 'Content-Transfer-Encoding: 7bit\nContent-Disposition: attachment; filename="cloud-config"\n\n'
    + '#cloud-config\nhostname: single\n';
  const r = await translateUserData(enc(single), data);
  t.ok(r.ok && r.data.format === 'multipart' && /hostname: single/.test(r.data.config), 'a one-part MIME message');
  const b64 = 'Content-Type: text/cloud-config\nContent-Transfer-Encoding: base64\n\n'
    + `${Buffer.from('#cloud-config\nhostname: encoded\n').toString('base64')}\n`;
  const e = await translateUserData(enc(b64), data);
  t.ok(e.ok && /hostname: encoded/.test(e.data.config), 'its base64 body decoded');
  const multi = 'Content-Type: multipart/mixed; boundary="XX"\nMIME-Version: 1.0\n\n--XX\n'
    + 'Content-Type: text/jinja2\n\n## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\n--XX--\n';
  const m = await translateUserData(enc(multi), data);
  t.ok(m.ok && /hostname: node7/.test(m.data.config), 'a text/jinja2 part rendered, then read as cloud-config');
  const dup = await translateUserData(enc('#cloud-config\nhostname: a\nhostname: b\n'), data);
  t.ok(dup.ok && /hostname: b/.test(dup.data.config), 'duplicated key: the last wins');
  t.match(dup.ok && dup.data.ignored.join('\n'), /line 3: the key "hostname" appears again/);
});
