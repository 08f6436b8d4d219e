// access: who may call what on the API, in one place. A user's role comes from the
// Organization of their client certificate; each RPC says what it needs; each type says
// who writes it (its definition's `access`) and whether it is sensitive. The engine
// enforces this table (init/engine/api/access.ts), docs/security.md prints it, and a
// test calls every RPC with every role.
import type { ResourceDefinitionSpec, TypeAccess } from '../../cosi/meta/definition.ts';
import type { WriteIntent } from '../../cosi/remote/server.ts';
import { DEFINITION_TYPE, NAMESPACE_TYPE } from '../../cosi/meta/definition.ts';
import {
  API_CERTIFICATE_STATUS_TYPE, BOOT_STATUS_TYPE, CONFIG_SOURCE_TYPE, CONFIG_STATUS_TYPE, VERSION_TYPE,
} from '../../proto/gen/resource-types.ts';

/** The roles a client certificate can carry, most powerful first. */
export const ROLES = ['admin', 'operator', 'reader'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who is calling: a user with a role, anyone while the machine has no CA (maintenance), a plugin, or a client whose
 * certificate was refused: it may do nothing, and each call it makes is answered with why (an expired certificate
 * by a machine's clock at 2099 says so, instead of a connection closed without a word).
 */
export type Caller =
  | { kind: 'user'; role: Role; subject: string }
  | { kind: 'maintenance'; subject: string }
  | { kind: 'plugin'; name: string }
  | { kind: 'refused'; subject: string; why: string };

/**
 * What an RPC needs: to read the type it names, any role (a view of the machine: logs, processes; not
 * in maintenance mode), to write the type, to change the machine config, to operate the machine
 * (operator or admin), or the admin role.
 */
export type Need = 'read' | 'view' | 'write' | 'apply-config' | 'confirm-config' | 'operate' | 'admin';

export interface RpcRule { path: string; need: Need; doc: string }

export const RPC_TABLE: readonly RpcRule[] = [
  { path: '/cosi.resource.State/Get', need: 'read', doc: 'one resource' },
  { path: '/cosi.resource.State/List', need: 'read', doc: 'the resources of a type' },
  { path: '/cosi.resource.State/Watch', need: 'read', doc: 'changes of a type or resource' },
  { path: '/cosi.resource.State/Create', need: 'write', doc: 'a new resource' },
  { path: '/cosi.resource.State/Update', need: 'write', doc: 'a change (finalizers only: any role that writes)' },
  { path: '/cosi.resource.State/Destroy', need: 'write', doc: 'removal' },
  { path: '/cosi.resource.State/Teardown', need: 'write', doc: 'removal, first step' },
  { path: '/cosi.resource.State/TeardownAndDestroy', need: 'write', doc: 'removal, waiting for finalizers' },
  {
    path: '/appliance.config.v1alpha1.ConfigService/ApplyConfig', need: 'apply-config',
    doc: 'merge or replace the machine config (each resource in it as a write of its type)',
  },
  {
    path: '/appliance.config.v1alpha1.ConfigService/ConfirmConfig', need: 'confirm-config',
    doc: 'keep a tried config',
  },
  { path: '/appliance.runtime.v1alpha1.LogService/Logs', need: 'view', doc: 'the lines of a log, then new ones' },
  { path: '/appliance.runtime.v1alpha1.LogService/LogSources', need: 'view', doc: 'the logs there are' },
  {
    path: '/appliance.runtime.v1alpha1.MachineService/Overview', need: 'view',
    doc: 'uptime, load, CPUs, memory (from /proc)',
  },
  { path: '/appliance.runtime.v1alpha1.MachineService/Processes', need: 'view', doc: 'the processes' },
  { path: '/appliance.runtime.v1alpha1.MachineService/Mounts', need: 'view', doc: 'the mounts' },
  { path: '/appliance.runtime.v1alpha1.MachineService/Sockets', need: 'view', doc: 'TCP and UDP sockets' },
  {
    path: '/appliance.runtime.v1alpha1.MachineService/RestartPlugin', need: 'operate',
    doc: 'stop a plugin\'s process and start it again',
  },
  {
    path: '/appliance.upgrade.v1alpha1.UpgradeService/Upload', need: 'admin',
    doc: 'a chunk of the bundle of an UpgradeRequest (which only admins create)',
  },
  {
    path: '/appliance.extension.v1alpha1.ExtensionService/Push', need: 'admin',
    doc: 'a chunk of an extension\'s image pushed to run instead of the declared one',
  },
];

export const rpcRule = (path: string): RpcRule | undefined => RPC_TABLE.find((r) => r.path === path);

/**
 * What maintenance mode lets anyone read: enough to find the machine's types, see whether it
 * is configured and, when it is not, what each config source said (never the user data).
 */
export const MAINTENANCE_READABLE: ReadonlySet<string> = new Set([
  DEFINITION_TYPE, NAMESPACE_TYPE, VERSION_TYPE, BOOT_STATUS_TYPE, CONFIG_STATUS_TYPE, API_CERTIFICATE_STATUS_TYPE,
  CONFIG_SOURCE_TYPE,
]);

export interface TypeFacts { type: string; access: TypeAccess; sensitive: boolean }

export function typeFacts(d: ResourceDefinitionSpec): TypeFacts {
  return { type: d.type, access: d.access ?? 'users', sensitive: d.sensitivity === 'sensitive' };
}

/** Why `caller` may not read `t`, or undefined when it may. */
export function readDenied(caller: Caller, t: TypeFacts): string | undefined {
  switch (caller.kind) {
    case 'plugin': return undefined;
    case 'maintenance':
      return MAINTENANCE_READABLE.has(t.type) ? undefined : `${MAINTENANCE_WHY}: ${t.type} cannot be read yet`;
    case 'user':
      return t.sensitive && caller.role !== 'admin' ? `${t.type} is sensitive: admins only` : undefined;
    case 'refused': return caller.why;
  }
}

/**
 * Why `caller` may not make write `w` of a `t` (create, update, destroy, teardown), or
 * undefined when it may. A user may write as an owner of their own (a controller of
 * theirs, as the COSI wire allows) but never as one of the machine's controllers
 * (`reserved`); holding or letting go of a finalizer (the dependant's part of the
 * teardown pattern) is allowed on any type to roles that write. Plugins have their own
 * guard (their declared outputs).
 */
export function writeDenied(
  caller: Caller, t: TypeFacts, w: WriteIntent, reserved: (owner: string) => boolean,
): string | undefined {
  if (caller.kind === 'plugin') return undefined;
  if (caller.kind === 'maintenance') return `${MAINTENANCE_WHY}: nothing can be written but a config`;
  if (caller.kind === 'refused') return caller.why;
  if (caller.role === 'reader') return 'the reader role may not write';
  if (w.finalizersOnly) return undefined;
  if (w.owner !== '' && reserved(w.owner)) return `"${w.owner}" is a controller of the machine: only it writes as it`;
  if (t.access === 'controllers') {
    return `${t.type} is written by its controller only; declare the spec it reports on instead`;
  }
  if (t.access === 'admin' && caller.role !== 'admin') return `${t.type} is written by admins only`;
  return undefined;
}

/** Why `caller` may not make this call at all (before any type is looked at), or undefined. */
export function callDenied(caller: Caller, rule: RpcRule): string | undefined {
  if (caller.kind === 'refused') return caller.why;
  if (caller.kind !== 'user') return undefined;
  if ((rule.need === 'apply-config' || rule.need === 'confirm-config') && caller.role === 'reader') {
    return 'the reader role may not change the machine config';
  }
  if (rule.need === 'admin' && caller.role !== 'admin') return `the ${caller.role} role may not: admins only`;
  if (rule.need === 'operate' && caller.role === 'reader') {
    return 'the reader role may not operate the machine: operators and admins only';
  }
  return undefined;
}

export const MAINTENANCE_WHY = 'the machine is in maintenance mode (no API certificate authority configured yet; '
  + 'apply a config made with `cosictl gen config --secrets`)';

/** A role from a certificate's Organizations: the first that names one, or undefined. */
export function roleOf(organizations: readonly string[]): Role | undefined {
  return ROLES.find((r) => organizations.includes(r));
}
