// api-access: the role table (model/access.ts) applied to one caller's calls, with the
// facts of each type read from its ResourceDefinition at the moment of the call.
import type { ResourceDefinitionSpec } from '../../../cosi/meta/definition.ts';
import type { CallAccess, WriteIntent } from '../../../cosi/remote/server.ts';
import { foreignLayer, LAYER_WRITERS } from '../../../machinery/model/layers.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import { readDenied, typeFacts, writeDenied, type Caller, type TypeFacts } from '../../../machinery/model/access.ts';

/** `reserved`: owners users may not write as (the machine's controllers, the engine, meta). */
export function createApiAccess(
  definitionOf: (type: string) => ResourceDefinitionSpec | undefined, reserved: (owner: string) => boolean,
): (caller: Caller) => CallAccess {
  // A type nobody defined: the state answers not-found or admission refuses it; the role still counts.
  const factsOf = (type: string): TypeFacts => {
    const d = definitionOf(type);
    return d ? typeFacts(d) : { type, access: 'users', sensitive: false };
  };
  const deny = (why: string | undefined, type: string) => {
    if (why) throw new StateError('permission-denied', why, type);
  };
  // Users declare the config layer; the other layers' specs are their writers' (the DHCP client's...).
  const layerDenied = (caller: Caller, w: WriteIntent) => {
    const layer = caller.kind === 'user' && !w.finalizersOnly ? foreignLayer(definitionOf(w.type)?.schema, w.spec)
      : undefined;
    return layer && `${w.type}: the ${layer} layer belongs to ${LAYER_WRITERS[layer]}; users declare the config `
      + 'layer (leave layer out)';
  };
  return (caller) => ({
    read: (type) => deny(readDenied(caller, factsOf(type)), type),
    write: (w) => deny(writeDenied(caller, factsOf(w.type), w, reserved) ?? layerDenied(caller, w), w.type),
  });
}
