// types: the issue plugin's resources. Motd (config) is what a user declares;
// Issue (runtime) is the login banner the plugin renders from it and the version.
import type { DefinitionInput } from '../../init/cosi/meta/definition.ts';
import { CONFIG_NS, RUNTIME_NS } from '../../init/engine/resource-types.ts';

export const MOTD_TYPE = 'Motds.config.appliance.dev';
export const ISSUE_TYPE = 'Issues.runtime.appliance.dev';

export interface MotdSpec { text: string; priority?: number }
export interface IssueSpec { text: string; motds: string[] }

export const ISSUE_TYPES: DefinitionInput[] = [
  {
    type: MOTD_TYPE, defaultNamespace: CONFIG_NS,
    printColumns: [{ name: 'Text', jsonPath: '{.text}' }],
    schema: {
      type: 'object', required: ['text'],
      properties: { text: { type: 'string', pattern: '^[^\\u0000]{1,512}$' }, priority: { type: 'integer', minimum: 0, maximum: 100 } },
    },
  },
  { type: ISSUE_TYPE, defaultNamespace: RUNTIME_NS, printColumns: [{ name: 'Text', jsonPath: '{.text}' }] },
];
