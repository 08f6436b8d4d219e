// types: the issue plugin's resources. Motd (config) is what a user declares;
// Issue (runtime) is the login banner the plugin renders from it and the version.
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { CONFIG_NS, RUNTIME_NS } from '../../machinery/model/runtime-types.ts';
import { MESSAGES } from '../../proto/gen/spec-types.ts';
import { col } from '../sdk/definitions.ts';

export type { IssueSpec, MotdSpec } from '../../proto/gen/spec-types.ts';

export const MOTD_TYPE = 'Motds.config.appliance.dev';
export const ISSUE_TYPE = 'Issues.runtime.appliance.dev';

export const ISSUE_TYPES: DefinitionInput[] = [
  {
    type: MOTD_TYPE, defaultNamespace: CONFIG_NS, protoMessage: MESSAGES.MotdSpec,
    printColumns: [col('Text', 'text'), col('Priority', 'priority')],
  },
  {
    type: ISSUE_TYPE, defaultNamespace: RUNTIME_NS, protoMessage: MESSAGES.IssueSpec,
    printColumns: [col('Text', 'text')],
  },
];
