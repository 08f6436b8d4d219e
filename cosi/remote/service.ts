// service: the method paths of cosi.resource.State and the messages each takes and
// answers, in one place for the server and the client.
import type { MessageName } from './wire.ts';

export const STATE_SERVICE = 'cosi.resource.State';

export interface MethodDef { path: string; request: MessageName; response: MessageName; streaming: boolean }

const m = (name: string, streaming = false): MethodDef => ({
  path: `/${STATE_SERVICE}/${name}`, request: `${name}Request` as MessageName,
  response: `${name}Response` as MessageName, streaming,
});

export const STATE_METHODS = {
  Get: m('Get'), List: m('List', true), Create: m('Create'), Update: m('Update'), Destroy: m('Destroy'),
  Watch: m('Watch', true), Teardown: m('Teardown'), TeardownAndDestroy: m('TeardownAndDestroy'),
} as const;

export type StateMethod = keyof typeof STATE_METHODS;

/** The State method served at `path`, or undefined for another service's. */
export function stateMethodAt(path: string): StateMethod | undefined {
  return (Object.keys(STATE_METHODS) as StateMethod[]).find((name) => STATE_METHODS[name].path === path);
}
