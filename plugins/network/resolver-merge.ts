// resolver-merge: ResolverSpecs of every layer -> MergedResolverSpec "resolvers": the
// highest layer's.
import { mergeController } from '../sdk/merge-controller.ts';
import { type ResolverSpecSpec } from './types.ts';
import { MERGED_RESOLVER_SPEC_TYPE, NETWORK_NS, RESOLVER_SPEC_TYPE } from '../../proto/gen/resource-types.ts';

export const RESOLVERS_ID = 'resolvers';

export const resolverMergeController = () => mergeController<ResolverSpecSpec>({
  name: 'resolver-merge', namespace: NETWORK_NS, inputType: RESOLVER_SPEC_TYPE, outputType: MERGED_RESOLVER_SPEC_TYPE,
  key: () => RESOLVERS_ID,
  combine: 'winner',
});
