// support: one file with what someone helping needs to see of a machine: every resource (the specs
// of sensitive types redacted), every log, the kernel log, the versions and the health checks. Made
// on the client from what the API serves; a part it cannot read is named in the summary, not fatal.
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import YAML from 'yaml';
import {
  META_NAMESPACE, META_OWNER, NAMESPACE_TYPE, type ResourceDefinitionSpec,
} from '../../cosi/meta/definition.ts';
import type { Resource } from '../../cosi/resource/resource.ts';
import { encodeTar, type TarMember } from '../../machinery/disk/tar.ts';
import { LOG_RPC, callUnary } from '../../machinery/model/service-wire.ts';
import { COMMIT, VERSION } from '../../machinery/version.ts';
import type { HealthStatusSpec } from '../../proto/gen/spec-types.ts';
import { flag, noArguments } from '../args.ts';
import type { Command } from '../command.ts';
import { EXIT } from '../errors.ts';
import { resourceDocument } from '../output/format.ts';
import type { Session } from '../session.ts';
import { formatLogLine } from './logs.ts';
import { HEALTH_STATUS_TYPE, RUNTIME_NS, VERSION_TYPE } from '../../proto/gen/resource-types.ts';

export const SUPPORT_HELP = `usage: cosictl support [-o FILE]

Writes a support bundle (a gzip-compressed tar, default support.tar.gz) to hand to someone
helping with this machine:
  summary.txt                  when, from which machine, what is in it, what could not be read
  versions.yaml                this cosictl's version and the machine's Version resources
  resources/NAMESPACE/TYPE.yaml  every resource of every type (in its own namespace and in those users
                               made), as cosictl get -o yaml prints it;
                               the spec of a sensitive type's resource reads "REDACTED"
  logs/SOURCE.log              each log the machine keeps (engine, each plugin, the kernel)

An admin's context sees every type; another role's bundle says which types it could not read.

flags:
  -o, --output FILE   where to write (default support.tar.gz); - writes to standard output

exit codes: 0 written, 1 a part could not be read (the bundle is written all the same, the
summary names what is missing), 2 usage, 5 unreachable.
`;

export const REDACTED = 'REDACTED';
/** Calls at once: a machine has a few hundred type and namespace pairs. */
const PARALLEL = 16;

const sensitive = (d: ResourceDefinitionSpec) => d.sensitivity === 'sensitive';

/** Runs `jobs` at most `n` at a time; results in order. */
async function limited<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, async () => {
    for (let i = next++; i < jobs.length; i = next++) out[i] = await jobs[i]!();
  }));
  return out;
}

interface Part { member?: TarMember; problem?: string; resources?: number }

async function resourceParts(s: Session): Promise<Part[]> {
  const [defs, namespaces] = await Promise.all([
    s.definitions(), s.state.list({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE })]);
  // A namespace the machine made holds its own types (network: the net types); one a user made may hold any.
  // Asking every type in every namespace was 700 calls, most of support's 5 s on a small machine.
  const userNamespaces = namespaces.filter((n) => n.metadata.owner !== META_OWNER).map((n) => n.metadata.id);
  const where = (d: ResourceDefinitionSpec) => [...new Set([s.defaultNamespaceOf(d), ...userNamespaces])];
  const jobs = defs.flatMap((d) => where(d).map((ns) => async (): Promise<Part> => {
    let rs: Resource[];
    try {
      rs = await s.state.list({ namespace: ns, type: d.type });
    } catch (e) {
      const m = (e as Error).message;
      // A type lives in some namespaces only; the others answer with nothing or refuse: neither is news.
      if (/not found|unknown namespace|no such namespace/i.test(m)) return {};
      return { problem: `${ns}/${d.type}: ${m}` };
    }
    if (!rs.length) return {};
    const docs = rs.map((r) => {
      const doc = resourceDocument(r);
      return sensitive(d) ? { ...doc, spec: REDACTED } : doc;
    });
    const text = docs.map((doc) => YAML.stringify(doc, { lineWidth: 0 })).join('---\n');
    return { member: { name: `resources/${ns}/${d.type}.yaml`, data: Buffer.from(text) }, resources: rs.length };
  }));
  return limited(jobs, PARALLEL);
}

async function logParts(s: Session): Promise<Part[]> {
  const sources = (await callUnary(s.state, LOG_RPC.logSources, {})).sources ?? [];
  return limited(sources.map((src) => async (): Promise<Part> => {
    let text = '';
    const request = LOG_RPC.logs.request.encode({ source: src.name, follow: false, tail: 0, previous: false });
    const call = s.state.stream(LOG_RPC.logs.path, request, (m) => {
      text += formatLogLine(LOG_RPC.logs.response.decode(m));
    }, s.longCallMs);
    const e = await call.done;
    // What arrived before a failure is kept.
    const member = { name: `logs/${src.name}.log`, data: Buffer.from(text) };
    return e ? { problem: `logs/${src.name}: ${e.message}`, member } : { member };
  }), 4);
}

export const supportCommand: Command = {
  name: 'support',
  summary: 'support [-o FILE]      a support bundle: resources (secrets redacted), logs, versions',
  help: SUPPORT_HELP,
  flags: ['output'],
  async run({ p, err, session }) {
    noArguments('support', p.positional);
    const file = flag(p, 'output') ?? 'support.tar.gz';
    const s = await session();
    const started = new Date();
    err('support: reading resources and logs ...\n');
    // Both at once: the machine answers the log calls while the client writes out the resources.
    const [resources, logs] = await Promise.all([
      resourceParts(s),
      logParts(s).catch((e: unknown): Part[] => [{ problem: `logs: ${(e as Error).message}` }]),
    ]);
    const defs = await s.definitions();
    const versions = resources.filter((r) => r.member?.name.endsWith(`/${VERSION_TYPE}.yaml`))
      .map((r) => YAML.parseAllDocuments(r.member!.data.toString()).map((d) => d.toJS()));
    const healthFile = `resources/${RUNTIME_NS}/${HEALTH_STATUS_TYPE}.yaml`;
    const health = resources.find((r) => r.member?.name === healthFile)?.member;
    const checks = health ? ((YAML.parse(health.data.toString()) as { spec: HealthStatusSpec }).spec.checks ?? []) : [];
    const parts = [...resources, ...logs];
    const problems = parts.flatMap((x) => (x.problem ? [x.problem] : []));
    const count = resources.reduce((n, r) => n + (r.resources ?? 0), 0);
    const redacted = defs.filter(sensitive).map((d) => d.type);
    const summary = [
      `support bundle of ${s.ctx.endpoint}, made ${started.toISOString()} by cosictl ${VERSION} (${COMMIT})`,
      `resources: ${count} in ${resources.filter((r) => r.member).length} files (${defs.length} types known)`,
      `redacted (sensitive types, spec replaced by "${REDACTED}"): ${redacted.join(', ') || 'none'}`,
      `logs: ${logs.filter((l) => l.member).map((l) => l.member!.name.slice(5, -4)).join(', ') || 'none'}`,
      `health: ${checks.length ? '' : 'no Health resource read'}`,
      ...checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}${c.message ? `: ${c.message}` : ''}`),
      problems.length ? `could not read:\n${problems.map((x) => `  ${x}`).join('\n')}` : 'everything was read',
      '',
    ].join('\n');
    const members: TarMember[] = [
      { name: 'summary.txt', data: Buffer.from(summary) },
      { name: 'versions.yaml', data: Buffer.from(YAML.stringify({
        client: { version: VERSION, commit: COMMIT, node: process.version }, machine: versions.flat(),
      })) },
      ...parts.flatMap((x) => (x.member ? [x.member] : [])),
    ];
    const bundle = gzipSync(encodeTar(members, Math.floor(started.getTime() / 1000)));
    if (file === '-') process.stdout.write(bundle);
    else writeFileSync(file, bundle, { mode: 0o600 });
    err(`support: ${count} resources, ${logs.filter((l) => l.member).length} logs -> `
      + `${file === '-' ? 'standard output' : file} (${(bundle.length / 1024).toFixed(0)} KiB)\n`);
    if (problems.length) {
      err(`support: could not read ${problems.length} part(s), named in summary.txt: ${problems[0]}\n`);
      return EXIT.failed;
    }
    return EXIT.ok;
  },
};
