// definitions: small helpers for the ResourceDefinitions plugins declare.
import type { DefinitionInput, PrintColumn } from '../../cosi/meta/definition.ts';

/** A print column showing a spec field. */
export const col = (name: string, field: string): PrintColumn => ({ name, jsonPath: `{.${field}}` });
export const LAYER_COLUMN = col('Layer', 'layer');
export const STATE_COLUMN = col('State', 'state');
export const ERROR_COLUMN = col('Error', 'error');

/** A declared type and its merged twin (Merged<Type>): same namespace, message, columns and sensitivity. */
export function declaredAndMerged(d: DefinitionInput, mergedType: string): DefinitionInput[] {
  return [d, {
    type: mergedType, defaultNamespace: d.defaultNamespace, protoMessage: d.protoMessage!,
    printColumns: d.printColumns ?? [], ...(d.sensitive ? { sensitive: true } : {}),
  }];
}
