// issue: renders the login banner (Issue) from the version and the users' Motds.
// Small on purpose: it proves the path API -> state -> plugin process -> state -> API.
import type { Plugin } from '../../machinery/model/plugin.ts';
import { issueStatusController } from './issue-status.ts';
import { ISSUE_TYPES } from './types.ts';

export const issuePlugin: Plugin = {
  name: 'issue',
  description: 'Renders the login banner from the version and the Motd resources.',
  types: () => ISSUE_TYPES,
  capabilities: [],
  controllers: () => [issueStatusController()],
};
