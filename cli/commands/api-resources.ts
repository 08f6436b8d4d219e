// api-resources: the resource types the machine serves, with aliases and defaults.
import type { TableOut } from '../output/table.ts';
import type { Session } from '../session.ts';

export async function apiResources(s: Session, table: TableOut): Promise<number> {
  const defs = [...(await s.definitions())].sort((a, b) => a.type.localeCompare(b.type));
  table(
    ['TYPE', 'ALIASES', 'DEFAULT NAMESPACE', 'SENSITIVE'],
    defs.map((d) => [d.type, d.aliases.join(','), d.defaultNamespace, d.sensitivity ? 'yes' : '']),
  );
  return 0;
}
