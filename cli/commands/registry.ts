// registry: every cosictl command, in the order `cosictl --help` lists them.
import type { Command } from '../command.ts';
import { firstOf, typeThenIds } from '../completion/complete.ts';
import { apiResources } from './api-resources.ts';
import { APPLY_CONFIG_HELP, APPLY_HELP, applyConfig } from './apply.ts';
import { del, DELETE_FLAGS, DELETE_HELP } from './delete.ts';
import { genCommand, GEN_FLAGS, GEN_HELP } from './gen.ts';
import { get, GET_FLAGS, GET_HELP } from './get.ts';
import { install, INSTALL_FLAGS, INSTALL_HELP } from './install.ts';
import { rollback, ROLLBACK_FLAGS, ROLLBACK_HELP, upgrade, UPGRADE_FLAGS, UPGRADE_HELP } from './upgrade.ts';
import { validate, VALIDATE_HELP } from './validate.ts';
import { versionCommand } from './version.ts';
import { explainCommand } from './explain.ts';
import { describeCommand } from './describe.ts';
import { diffCommand } from './diff.ts';
import { editCommand } from './edit.ts';
import { completionCommand } from './completion.ts';
import { healthCommand } from './health.ts';
import { dmesgCommand, logsCommand } from './logs.ts';
import { supportCommand } from './support.ts';
import { rebootCommand, shutdownCommand } from './power.ts';
import { restartCommand, VIEW_COMMANDS } from './machine-views.ts';
import { configCommand } from './config.ts';
import { dashboardCommand } from './dashboard.ts';
import { eventsCommand } from './events.ts';
import { waitCommand } from './wait.ts';

const API_RESOURCES_HELP = `usage: cosictl api-resources

Lists the resource types the machine serves: each type's full name, its aliases (any of
them names the type in get, delete and documents), its default namespace, and whether its
specs are sensitive (only admins may read them).
`;

export const COMMANDS: readonly Command[] = [
  {
    name: 'get', help: GET_HELP, flags: GET_FLAGS,
    summary: `get TYPE [ID...]       show resources (table, -o wide|yaml|json|name|jsonpath=..., --watch,
                         -l selectors, --field-selector, --sort-by, -L label columns, -A; get all)`,
    run: async ({ p, out, err, table, session }) => get(await session(), p, out, err, table),
    async completeArg(line, current, lookups) {
      const c = await typeThenIds(Infinity)(line, current, lookups);
      if (line.args.length || !('values' in c)) return c;
      return { ...c, values: [{ value: 'all', about: 'every type that has resources' }, ...c.values] };
    },
    fanOut: true,
  },
  {
    name: 'apply', help: APPLY_HELP, flags: ['filename', 'dry-run', 'try'],
    summary: 'apply -f FILE          create or update resources from multi-document YAML (kept in the machine config)',
    run: async ({ p, out, err, session }) => applyConfig(await session(), p, 'merge', out, err),
  },
  {
    name: 'apply-config', help: APPLY_CONFIG_HELP, flags: ['filename', 'dry-run', 'try', 'confirm'],
    summary: 'apply-config -f FILE   replace the whole machine config (--dry-run, --try 60s, --confirm)',
    run: async ({ p, out, err, session }) => applyConfig(await session(), p, 'replace', out, err),
  },
  {
    name: 'validate', help: VALIDATE_HELP, flags: ['filename'],
    summary: 'validate -f FILE       check a machine config offline',
    run: ({ p, out, err }) => validate(p, out, err),
  },
  {
    name: 'delete', help: DELETE_HELP, flags: DELETE_FLAGS,
    summary: 'delete TYPE ID...      tear down and destroy resources (or -f FILE: the resources it names; --all)',
    run: async ({ p, out, err, session }) => del(await session(), p, out, err),
    completeArg: typeThenIds(Infinity),
  },
  {
    name: 'install', help: INSTALL_HELP, flags: INSTALL_FLAGS,
    summary: `install --disk PATH    install the machine's build to a disk (or --serial, --model, --size;
                         --wipe, --reboot), printing progress until done`,
    run: async ({ p, out, err, session }) => install(await session(), p, out, err),
  },
  {
    name: 'upgrade', help: UPGRADE_HELP, flags: UPGRADE_FLAGS,
    summary: 'upgrade --image FILE|URL  write a signed upgrade bundle to the other boot slot and reboot into it',
    run: async ({ p, out, err, session }) => upgrade(await session(), p, out, err),
  },
  {
    name: 'rollback', help: ROLLBACK_HELP, flags: ROLLBACK_FLAGS,
    summary: 'rollback               boot the other slot (the previous version) from now on',
    run: async ({ p, out, err, session }) => rollback(await session(), p, out, err),
  },
  diffCommand,
  editCommand,
  describeCommand,
  eventsCommand,
  waitCommand,
  explainCommand,
  {
    name: 'api-resources', help: API_RESOURCES_HELP, flags: [],
    summary: 'api-resources          the resource types the machine serves',
    run: async ({ table, session }) => apiResources(await session(), table),
    fanOut: true,
  },
  healthCommand,
  dashboardCommand,
  logsCommand,
  dmesgCommand,
  supportCommand,
  rebootCommand,
  shutdownCommand,
  restartCommand,
  ...VIEW_COMMANDS,
  versionCommand,
  configCommand,
  completionCommand,
  {
    name: 'gen', help: GEN_HELP, flags: GEN_FLAGS,
    summary: 'gen secrets|config     make a machine\'s API secrets, a starting config and a cosictl context',
    run: async ({ p, out, err, configPath, configGiven }) =>
      genCommand(p, configGiven ? configPath : undefined, out, err),
    completeArg: firstOf([{ value: 'secrets', about: 'a CA and client certificates' },
      { value: 'config', about: 'a starting machine config and a cosictl context' }]),
  },
];

export const commandNamed = (name: string) => COMMANDS.find((c) => c.name === name);
