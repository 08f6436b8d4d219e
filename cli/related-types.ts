// related-types: the types one step either side of a type on a setting's way, by the naming
// every built-in type follows: FooSpec (declared, per layer) -> MergedFooSpec -> FooStatus /
// FooSpecStatus. describe shows them; delete names the spec behind a controller's output.
import type { ResourceDefinitionSpec } from '../cosi/meta/definition.ts';

export function relatedTypes(
  def: ResourceDefinitionSpec, defs: readonly ResourceDefinitionSpec[],
): ResourceDefinitionSpec[] {
  const d = def.displayType;
  const base = d.replace(/^Merged/, '').replace(/(SpecStatus|Spec|Status)$/, '');
  const names = new Set([`${base}Spec`, `Merged${base}Spec`, `${base}Status`, `${base}SpecStatus`]);
  names.delete(d);
  return defs.filter((x) => names.has(x.displayType));
}

/** What a user declares for what `def` holds: the related spec that is not merged. */
export const declaredSpecs = (def: ResourceDefinitionSpec, defs: readonly ResourceDefinitionSpec[]) =>
  relatedTypes(def, defs).filter((d) => /Spec$/.test(d.displayType) && !/^Merged/.test(d.displayType));

/** Why a controller's output cannot be changed by hand (`verb`: delete, edit), and what to change instead. */
export function controllerOwnedWhy(
  verb: string, name: string, owner: string, def: ResourceDefinitionSpec, defs: readonly ResourceDefinitionSpec[],
): string {
  const specs = declaredSpecs(def, defs).map((d) => d.displayType);
  const deleting = verb === 'delete';
  return `${verb} ${name}: a controller ("${owner}") writes it, so it cannot be ${deleting ? 'deleted' : 'edited'}; `
    + (specs.length ? `${verb} the ${specs.join(' or ')} it comes from`
      : `it ${deleting ? 'goes when what it is made from goes' : 'follows what it is made from'}`);
}
