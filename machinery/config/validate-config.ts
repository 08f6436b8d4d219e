// validate-config: a config text checked as a whole against a state's definitions and
// namespaces, counting those the config declares itself (so one config can define a
// type and use it), and refusing documents aimed at resources a controller owns. The
// engine runs it before applying anything; `cosictl validate` runs it offline against
// the built-in types, so both say the same.
import {
  checkDocuments, formatProblem, loadDocuments, sourceName, type CheckOptions, type ConfigSource, type Loaded,
  type ResourceDocument,
} from './documents.ts';
import { createAdmission, type Admission } from './admission.ts';
import {
  DEFINITION_TYPE, fillDefinition, META_NAMESPACE, NAMESPACE_TYPE, type DefinitionInput, type ResourceDefinitionSpec,
} from '../../cosi/meta/definition.ts';
import { registerNamespace, registerTypes } from '../../cosi/meta/registry.ts';
import { definitionCodecs } from '../../cosi/remote/definition-codecs.ts';
import { META_CODECS } from '../../cosi/remote/meta-codecs.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { chainCodecs, type SpecCodecs } from '../../cosi/spec/spec-codec.ts';
import { specMessages, withSchemas } from '../model/spec-codecs.ts';

/** A config refused whole: every problem, formatted with its document, field and reason. */
export class ConfigRefused extends StateError {
  constructor(readonly problems: string[], source: ConfigSource) {
    const shown = problems.slice(0, 40);
    super('invalid-argument', `config from ${sourceName(source)} refused, nothing applied: `
      + `${problems.length} problem(s)\n${shown.join('\n')}`
      + (problems.length > shown.length ? `\n... and ${problems.length - shown.length} more` : ''));
    this.name = 'ConfigRefused';
  }
}

export interface ValidationContext {
  state: MemoryState;
  admission: Admission;
  codecs: SpecCodecs;
}

/**
 * Types the config does not declare but that come with it: those of the extensions it declares, learned from
 * their images (the engine's), and why some could not be learned (said when a type is then unknown).
 */
export interface ComingTypes { types: readonly DefinitionInput[]; unknownWhy: readonly string[] }

/** The documents of `type` the config holds, as far as the machine's types can tell (a first look). */
export function documentsOfType(loaded: Loaded, ctx: ValidationContext, type: string): ResourceDocument[] {
  const { defs, namespaces } = known(ctx);
  return checkDocuments(loaded, defs, namespaces).docs.filter((d) => d.type === type);
}

function known(ctx: ValidationContext) {
  const defs = ctx.state.listSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE })
    .map((r) => r.spec as ResourceDefinitionSpec);
  const namespaces = new Set(ctx.state.listSync({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE })
    .map((r) => r.metadata.id));
  return { defs, namespaces };
}

/** A valid config: its documents, and those it skipped (specs of another layer, read back), each said. */
export interface ValidConfig { docs: ResourceDocument[]; skipped: string[] }

/**
 * The documents of a valid config, or ConfigRefused naming every problem. `text`: a config's text
 * (loaded here), or documents loaded already (the engine loads them without holding the event loop).
 */
export function validateConfig(
  text: string | Loaded, ctx: ValidationContext, source: ConfigSource, maxBytes?: number, coming?: ComingTypes,
  check: CheckOptions = {},
): ValidConfig {
  const loaded = typeof text === 'string' ? loadDocuments(text, maxBytes) : text;
  const { state } = ctx;
  const { defs, namespaces } = known(ctx);
  let { docs, problems, skipped } = checkDocuments(loaded, defs, namespaces, check);
  const all: string[] = [];
  const declared = docs.filter((d) => d.namespace === META_NAMESPACE);
  if (declared.length || coming?.types.length) {
    // The config's own types and namespaces as admission would store them; then everything again with them.
    const own: ResourceDefinitionSpec[] = [];
    for (const d of declared) {
      try {
        const spec = ctx.codecs.get(d.type)?.normalize(d.spec) ?? d.spec;
        const admitted = ctx.admission.check(newResource(d, spec), state.findSync(d) ? 'update' : 'create');
        if (d.type === DEFINITION_TYPE) own.push(admitted.spec as ResourceDefinitionSpec);
        else namespaces.add(d.id);
      } catch (e) {
        all.push(formatProblem({ index: d.index, what: `${d.definition.displayType} ${d.id}`,
          message: (e as Error).message }, source));
      }
    }
    for (const d of coming?.types ?? []) {
      const p = { namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: d.type.toLowerCase() };
      try {
        own.push(ctx.admission.check(newResource(p, fillDefinition(d)), state.findSync(p) ? 'update' : 'create')
          .spec as ResourceDefinitionSpec);
      } catch (e) { all.push(`${d.type}, an extension's type: ${(e as Error).message}`); }
    }
    for (const d of own) namespaces.add(d.defaultNamespace);
    const ownTypes = new Set(own.map((d) => d.type));
    const withOwn = [...defs.filter((d) => !ownTypes.has(d.type)), ...own];
    ({ docs, problems, skipped } = checkDocuments(loaded, withOwn, namespaces, check));
  }
  all.push(...problems.map((p) => formatProblem(p, source)));
  if (problems.length && coming?.unknownWhy.length) all.push(...coming.unknownWhy);
  for (const d of docs) {
    const owner = state.findSync(d)?.metadata.owner;
    if (owner) {
      all.push(formatProblem({ index: d.index, what: `${d.definition.displayType} ${d.id}`,
        message: `is managed by "${owner}"; declare the matching spec resource instead` }, source));
    }
  }
  if (all.length) throw new ConfigRefused(all, source);
  return { docs, skipped: skipped.map((p) => formatProblem(p, source)) };
}

/**
 * A machine of this build as far as validation needs one, with nothing in it but its built-in types and
 * namespaces: `cosictl validate` checks a config against it offline.
 */
export async function offlineValidationContext(
  types: readonly DefinitionInput[], namespaces: Readonly<Record<string, string>>,
): Promise<ValidationContext> {
  const definitionOf = (type: string) =>
    state.findSync({ namespace: META_NAMESPACE, type: DEFINITION_TYPE, id: type.toLowerCase() })
      ?.spec as ResourceDefinitionSpec | undefined;
  const codecs = chainCodecs(definitionCodecs(specMessages(), definitionOf, () => undefined), META_CODECS);
  const state: MemoryState = new MemoryState({
    normalize: (type, spec) => (codecs.get(type)?.normalize(spec) ?? spec),
  });
  for (const [ns, description] of Object.entries(namespaces)) await registerNamespace(state, ns, description);
  await registerTypes(state, withSchemas(types));
  return { state, admission: createAdmission(state), codecs };
}
