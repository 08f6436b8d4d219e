// issue: renders the login banner (Issue) from the version and the users' Motds.
// Small on purpose: it proves the path API -> state -> controller -> state -> API. It runs inside the engine
// (Plugin.inEngine): it only transforms state.
import type { Plugin } from '../../machinery/model/plugin.ts';
import { issueStatusController } from './issue-status.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';

export const issuePlugin: Plugin = {
  name: 'issue',
  description: 'Renders the login banner from the version and the Motd resources.',
  types: () => definitionsServedBy('issue'),
  capabilities: [],
  // Renders text from resources: nothing of the kernel's, so it runs in PID 1's engine, not as a process.
  inEngine: true,
  controllers: () => [issueStatusController()],
};
