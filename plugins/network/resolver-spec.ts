// resolver-spec: MergedResolverSpec "resolvers" -> /etc/resolv.conf -> ResolverSpecStatus.
// What the file held before the first write is kept in the status and written back
// (or the file removed, if there was none) when no ResolverSpec remains.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../../native/errno.ts';
import { layerOf } from '../../machinery/model/layers.ts';
import { specController } from '../../cosi/controller/spec-controller.ts';
import { type ResolverSpecSpec, type ResolverSpecStatusSpec } from './types.ts';
import { MERGED_RESOLVER_SPEC_TYPE, NETWORK_NS, RESOLVER_SPEC_STATUS_TYPE } from '../../proto/gen/resource-types.ts';

export function resolvConf(s: ResolverSpecSpec): string {
  return [
    '# written by the network plugin (ResolverSpec); edit the resource, not this file',
    ...(s.servers ?? []).slice(0, 3).map((ip) => `nameserver ${ip}`),
    ...(s.searchDomains?.length ? [`search ${s.searchDomains.join(' ')}`] : []),
  ].join('\n') + '\n';
}

export function resolverSpecController(etc = '/etc') {
  const file = join(etc, 'resolv.conf');
  const describe = (s: ResolverSpecSpec): ResolverSpecStatusSpec => ({
    servers: (s.servers ?? []).slice(0, 3), ...(s.searchDomains?.length ? { searchDomains: s.searchDomains } : {}),
    layer: layerOf(s),
  });
  const current = (): { original?: string } => {
    try {
      return { original: readFileSync(file, 'utf8') };
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return {};
      throw e;
    }
  };
  return specController<ResolverSpecSpec, ResolverSpecStatusSpec, null>({
    name: 'resolver-spec', namespace: NETWORK_NS,
    specType: MERGED_RESOLVER_SPEC_TYPE, statusType: RESOLVER_SPEC_STATUS_TYPE,
    observe: () => null,
    apply(_id, s, prev) {
      // Known once a write succeeded (no original then means there was no file) or one was read.
      const known = prev && (prev.state === 'applied' || prev.original !== undefined);
      const original = known ? (prev.original !== undefined ? { original: prev.original } : {}) : current();
      mkdirSync(etc, { recursive: true });
      writeFileSync(file, resolvConf(s));
      return { ...describe(s), state: 'applied', ...original };
    },
    failed: (_id, s, prev, error) => ({
      ...describe(s), state: 'error', error, ...(prev?.original !== undefined ? { original: prev.original } : {}),
    }),
    undo(_id, prev) {
      if (prev.original !== undefined) writeFileSync(file, prev.original);
      else rmSync(file, { force: true });
    },
  });
}
