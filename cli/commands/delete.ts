// delete: tears down and destroys resources (waits for their finalizers).
import { CliError, EXIT } from '../errors.ts';
import type { Parsed } from '../args.ts';
import type { Session } from '../session.ts';

export const DELETE_HELP = `usage: cosictl delete TYPE ID [ID...]

Tears down and destroys the resources; waits until their finalizers are released.
Resources managed by a controller cannot be deleted (delete the spec they come from).
`;

export async function del(s: Session, p: Parsed, out: (text: string) => void): Promise<number> {
  const [typeName, ...ids] = p.positional;
  if (!typeName || !ids.length) throw new CliError('delete: give a TYPE and at least one ID', EXIT.usage);
  const def = await s.resolve(typeName);
  const namespace = s.namespaceFor(def);
  for (const id of ids) {
    const ptr = { namespace, type: def.type, id };
    const cur = await s.state.get(ptr);
    if (cur.metadata.owner) throw new CliError(
      `${def.displayType.toLowerCase()}/${id} is managed by "${cur.metadata.owner}"`, EXIT.failed,
    );
    await s.state.teardownAndDestroy(ptr);
    out(`${def.displayType.toLowerCase()}/${id} deleted\n`);
  }
  return EXIT.ok;
}
