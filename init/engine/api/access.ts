// api-access: the role table (model/access.ts) applied to one caller's calls, with the
// facts of each type read from its ResourceDefinition at the moment of the call.
import type { ResourceDefinitionSpec } from '../../../cosi/meta/definition.ts';
import type { CallAccess } from '../../../cosi/remote/server.ts';
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
  return (caller) => ({
    read: (type) => deny(readDenied(caller, factsOf(type)), type),
    write: (w) => deny(writeDenied(caller, factsOf(w.type), w, reserved), w.type),
  });
}
