// network-config against the reference documents of the formats it reads: every key cloud-init's
// version 1 and version 2 documents and netplan's YAML reference name (transcribed, with the
// source commit and version, into testing/reference/), given values of every kind, is either
// applied or listed as ignored with its path; and every example of those documents translates,
// with each of its keys accounted for the same way. Nothing is dropped silently.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parsePyYaml } from '../safe-yaml.ts';
import { translateNetworkConfig } from './network-config.ts';

const dir = new URL('./testing/reference/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir), 'utf8');

/** Where an ignored entry ("network-config PATH: why") points. */
const ignoredPath = (entry: string) => entry.replace(/^network-config /, '').replace(/: .*$/s, '');

/** True when the translation applied `path` or listed it (or a mapping or list it is part of) as ignored. */
function accounted(path: string, applied: readonly string[], ignored: readonly string[]): boolean {
  if (applied.includes(path)) return true;
  return ignored.map(ignoredPath).some((q) => path === q || path.startsWith(`${q}.`) || path.startsWith(`${q}[`));
}

/** Values of every kind a key may be given: each must end applied or listed, never lost. */
const VALUES: unknown[] = [true, false, 7, '192.0.2.7', 'x', ['192.0.2.0/24'], [{ a: 1 }], {}, { x: 1 }];

interface Reference { source: string; keys: { path: string; note: string }[] }

function reference(name: string): Reference {
  const lines = read(name).split('\n');
  const source = lines[0]!;
  const keys = lines.filter((l) => l.trim() && !l.startsWith('#')).map((l) => {
    const [path = '', note = ''] = l.split('\t');
    return { path, note };
  });
  return { source, keys };
}

/** Device types of a version-2 document, from its header line ("<type> = any device type (a|b|c)"). */
function deviceTypes(r: string, fallback: string[]): string[] {
  const m = /<type> = any (?:supported )?device type[^(]*\(([^)]+)\)/.exec(r);
  return m ? m[1]!.split('|').map((s) => s.trim()) : fallback;
}

/** Sets `value` at a dotted path with [] for list items (creating mappings and one-item lists). */
function place(doc: Record<string, unknown>, path: string, value: unknown): string {
  const parts = path.split('.');
  let at: Record<string, unknown> = doc;
  const concrete: string[] = [];
  parts.forEach((raw, i) => {
    const list = raw.endsWith('[]');
    const key = list ? raw.slice(0, -2) : raw;
    concrete.push(list ? `${key}[0]` : key);
    const last = i === parts.length - 1;
    if (list) {
      const items = (at[key] ??= []) as Record<string, unknown>[];
      if (!items.length) items.push({});
      if (last) items[0] = value as Record<string, unknown>;
      else at = items[0]!;
    } else if (last) at[key] = value;
    else at = (at[key] ??= {}) as Record<string, unknown>;
  });
  return concrete.join('.');
}

function v2Cases(r: Reference, types: string[], physical: string[]) {
  const cases: { path: string; doc: Record<string, unknown> }[] = [];
  for (const { path } of r.keys) {
    const expanded = path.includes('<physical-type>') ? physical.map((p) => path.replace('<physical-type>', p))
      : path.includes('<type>') ? types.map((p) => path.replace('<type>', p)) : [path];
    for (const p of expanded) {
      const named = p.replace(/<id>/g, 'dev0').replace(/<ssid>/g, 'net0').replace(/<iface>/g, 'eth9')
        .replace(/<addr>/g, '192.0.2.9/24').replace(/<[^>]+>/g, 'x0');
      for (const value of VALUES) {
        const doc: Record<string, unknown> = { version: 2 };
        const concrete = place(doc, named, value);
        if (named === 'version') doc.version = 2;
        cases.push({ path: concrete, doc });
      }
    }
  }
  return cases;
}

/** `config[].type=physical .name`, `config[].subnets[].routes[].gateway`, ... -> documents of version 1. */
function v1Cases(r: Reference) {
  const cases: { path: string; doc: Record<string, unknown> }[] = [];
  for (const { path } of r.keys) {
    const typed = /^config\[\]\.type=(\w+)(?: \.(.+))?$/.exec(path);
    const subnetType = /^config\[\]\.subnets\[\]\.type=([\w-]+)$/.exec(path);
    const subnetKey = /^config\[\]\.subnets\[\]\.(.+)$/.exec(path);
    for (const value of VALUES) {
      if (typed) {
        const item: Record<string, unknown> = { type: typed[1] };
        const concrete = typed[2] ? place(item, typed[2], value) : 'type';
        cases.push({ path: `config[0].${concrete}`, doc: { version: 1, config: [item] } });
      } else if (subnetType) {
        cases.push({ path: 'config[0].subnets[0].type', doc: { version: 1,
          config: [{ type: 'physical', name: 'eth0', subnets: [{ type: subnetType[1] }] }] } });
      } else if (subnetKey) {
        const subnet: Record<string, unknown> = { type: 'static', address: '192.0.2.9/24' };
        const concrete = place(subnet, subnetKey[1]!, value);
        cases.push({ path: `config[0].subnets[0].${concrete}`,
          doc: { version: 1, config: [{ type: 'physical', name: 'eth0', subnets: [subnet] }] } });
      } else {
        const doc: Record<string, unknown> = { version: 1, config: [] };
        const concrete = place(doc, path, value);
        if (path === 'version') doc.version = 1;
        cases.push({ path: concrete, doc });
      }
    }
  }
  return cases;
}

const FILES: { file: string; cases: (r: Reference) => { path: string; doc: Record<string, unknown> }[] }[] = [
  { file: 'cloud-init-v1.txt', cases: v1Cases },
  { file: 'cloud-init-v2.txt', cases: (r) => v2Cases(r, ['ethernets', 'bonds', 'bridges', 'vlans'], ['ethernets']) },
  { file: 'netplan.txt', cases: (r) => v2Cases(r, deviceTypes(read('netplan.txt'), []), ['ethernets', 'wifis']) },
];

for (const { file, cases } of FILES) {
  t.test(`every key of ${file}: applied or listed with its path`, async (t) => {
    const r = reference(file);
    t.ok(r.keys.length > 50, `${r.keys.length} documented keys (${r.source.slice(2, 120)})`);
    const lost: string[] = [];
    let applied = 0;
    const all = cases(r);
    for (const c of all) {
      const out = translateNetworkConfig(c.doc);
      if (!out.ok) {
        lost.push(`${c.path}: the whole document refused (${out.message})`);
        continue;
      }
      if (out.applied.includes(c.path)) applied++;
      if (!accounted(c.path, out.applied, out.network.ignored ?? [])) {
        lost.push(`${c.path} = ${JSON.stringify(c.doc)}`);
      }
    }
    t.same(lost.slice(0, 20), [], `${all.length} documents (each key with ${VALUES.length} kinds of value): `
      + `${applied} applied, the rest listed; none lost`);
  });
}

/** Every mapping key of a document, as a path (list items as [i]). */
function keyPaths(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => keyPaths(x, `${at}[${i}]`));
  if (!v || typeof v !== 'object' || v instanceof Uint8Array) return [];
  return Object.entries(v).flatMap(([k, x]) => {
    const p = at ? `${at}.${k}` : k;
    return [p, ...keyPaths(x, p)];
  });
}

/** What DHCPv6 a document's devices ask for, by interface id: v2 dhcp6 (auto or off), v1 subnet types. */
function dhcp6Asked(doc: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  for (const section of ['ethernets', 'bonds', 'bridges', 'vlans']) {
    for (const [id, dev] of Object.entries((doc[section] ?? {}) as Record<string, Record<string, unknown>>)) {
      if (dev && typeof dev === 'object' && 'dhcp6' in dev) out.push([id, dev.dhcp6 === true ? 'auto' : 'off']);
    }
  }
  const V1: Record<string, string> = { dhcp6: 'stateful', 'ipv6_dhcpv6-stateful': 'stateful',
    'ipv6_dhcpv6-stateless': 'stateless' };
  for (const item of (Array.isArray(doc.config) ? doc.config : []) as Record<string, unknown>[]) {
    const types = ((item.subnets ?? []) as { type?: string }[]).map((s) => V1[s.type ?? '']).filter(Boolean);
    if (typeof item.name === 'string' && types.length) out.push([item.name, types.at(-1)!]);
  }
  return out;
}

const EXAMPLES = [['examples-v1.yaml', 1], ['examples-v2.yaml', 2], ['examples-netplan.yaml', 2]] as const;
for (const [file, version] of EXAMPLES) {
  t.test(`the examples of ${file} translate, each key accounted for`, async (t) => {
    const chunks = read(file).split(/^---$/m).map((c) => c.trim()).filter(Boolean);
    let translated = 0;
    for (const chunk of chunks) {
      const title = /^# (example \d+: .*)$/m.exec(chunk)?.[1] ?? chunk.slice(0, 40);
      const y = parsePyYaml(chunk);
      if (!y.ok) {
        t.match(title, /not (valid|parse)|placeholder|\.\.\.|YAML/i, `${title}: the document says it does not parse`);
        continue;
      }
      if (y.value === null || typeof y.value !== 'object') continue;
      const given = y.value as Record<string, unknown>;
      const inner = (given.network ?? given) as Record<string, unknown>;
      const doc = { ...inner, version: inner.version ?? version };
      const out = translateNetworkConfig(doc);
      if (!out.ok && ![1, 2, '1', '2'].includes(doc.version as number)) {
        t.match(out.message, /version "\w+" is not 1 or 2/, `${title}: a placeholder version is refused, named`);
        continue;
      }
      if (!out.ok) {
        t.fail(`${title}: refused: ${out.message}`);
        continue;
      }
      translated++;
      const lost = keyPaths(inner).filter((p) => !accounted(p, out.applied, out.network.ignored ?? []));
      t.same(lost, [], `${title}: every key applied or listed`);
      // Applied as written, for a key that used to be listed: each device's dhcp6 reaches its interface.
      for (const [id, want] of dhcp6Asked(inner)) {
        const got = out.network.interfaces?.find((i) => i.id === id)?.dhcp6;
        t.equal(got, want, `${title}: ${id} dhcp6 ${want}`);
      }
    }
    t.ok(translated > 0, `${translated} of ${chunks.length} examples translated`);
  });
}
