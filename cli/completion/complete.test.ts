// complete: the command line read as the parser reads it, without failing on what is unfinished,
// and what each place on it completes to. The machine's answers here are a fixed set of
// definitions and ids; the shells against a real engine are in cli/cosictl-daily.test.ts.
import t from 'tap';
import { fillDefinitions } from '../../cosi/meta/definition.ts';
import { COMMANDS } from '../commands/registry.ts';
import { complete, formatCompletion, readLine } from './complete.ts';
import type { Completion, Lookups } from './contract.ts';

const defs = fillDefinitions([
  { type: 'Motds.config.appliance.dev', defaultNamespace: 'config' },
  { type: 'LinkSpecs.net.appliance.dev', defaultNamespace: 'network', schema: {
    type: 'object', properties: {
      mtu: { type: 'integer', minimum: 68 },
      bond: { type: 'object', properties: { mode: { type: 'string', enum: ['active-backup'] } } },
    },
  } },
  { type: 'RouteSpecs.net.appliance.dev', defaultNamespace: 'network' },
  { type: 'ResolverSpecs.net.appliance.dev', defaultNamespace: 'network' },
]);
const asked: string[] = [];
const lookups: Lookups = {
  definitions: async () => defs,
  ids: async (type) => {
    asked.push(type);
    return type === 'motd' ? ['hello', 'help', 'other'] : [];
  },
  namespaces: async () => ['config', 'network'],
  contexts: () => ['lab', 'prod'],
};
const values = async (words: string[], current: string) => {
  const c: Completion = await complete(words, current, COMMANDS, lookups);
  return 'files' in c ? ':files' : c.values.map((v) => v.value);
};

t.test('readLine: flags and their values, the command and its arguments', async (t) => {
  t.same(readLine(['-n', 'x', 'get', '--sort-by=.id', 'motd', '-w']).line,
    {
      command: 'get', args: ['motd'],
      flags: new Map([['namespace', ['x']], ['sort-by', ['.id']], ['watch', ['true']]]),
    });
  t.equal(readLine(['get', '-o']).valueFor?.name, 'output', 'the word being typed is -o\'s value');
  t.equal(readLine(['get', '-o', 'json']).valueFor, undefined);
  t.same(readLine(['--bogus', 'get', '--', '-x']).line.args, ['-x'], 'unknown flags are passed over, -- ends flags');
});

t.test('commands, flags and fixed values', async (t) => {
  t.same(await values([], 'de'), ['delete', 'describe']);
  t.ok((await values([], '')).includes('help'));
  t.same(await values(['help'], 'ed'), ['edit']);
  t.same(await values(['get'], '--so'), ['--sort-by']);
  t.same(await values(['apply'], '--so'), [], 'only the flags apply takes');
  t.same(await values(['apply'], '--con'), ['--config', '--context'], 'and the global ones');
  t.same(await values(['get', '-o'], ''), ['wide', 'yaml', 'json', 'name', 'jsonpath=']);
  t.same(await values(['version', '-o'], ''), ['json', 'yaml']);
  t.equal(await values(['gen', 'secrets', '-o'], ''), ':files', 'gen -o is a file');
  t.equal(await values(['apply', '-f'], 'x'), ':files');
  t.same(await values(['--context'], ''), ['lab', 'prod']);
  t.same(await values(['config'], 'use'), ['use-context']);
  t.same(await values(['config', 'use-context'], ''), ['lab', 'prod']);
  t.same(await values(['config', 'view'], ''), []);
  t.same(await values(['completion'], ''), ['bash', 'zsh', 'fish']);
  t.same(await values(['gen'], ''), ['secrets', 'config']);
  t.same(await values(['-n'], 'n'), ['network']);
});

t.test('types by plural and alias; a shared alias is not offered; ids of the type given', async (t) => {
  t.same(await values(['get'], 'mo'), ['motds', 'motd']);
  const r = await values(['get'], 'r');
  t.ok(r.includes('routespec') && r.includes('resolverspec'), 'each one\'s own names');
  t.notOk(r.includes('rs'), 'rs, the initials of two types, names neither');
  t.same(await values(['get', 'motd'], 'hel'), ['hello', 'help']);
  t.same(await values(['delete', 'motd', 'hello'], ''), ['help', 'other'], 'not those given already');
  t.same(await values(['describe', 'motd', 'hello'], ''), [], 'describe takes one id');
  t.same(await values(['delete', '-f', 'x.yaml'], ''), [], 'nothing with -f');
  t.same(asked.filter((a) => a !== 'motd'), [], 'ids asked for the type typed');
  t.same(await values(['explain', 'linkspec'], ''), ['mtu', 'bond']);
  t.same(await values(['explain', 'linkspec'], 'bond.'), ['bond.mode']);
  t.same(await values(['explain', 'linkspec', 'mtu'], ''), []);
  t.same(await values(['explain', 'linkspec'], 'spec.bond.'), ['spec.bond.mode'], 'spec. as typed');
});

t.test('the protocol the scripts read', async (t) => {
  t.equal(formatCompletion({ values: [{ value: 'a', about: 'x\ty' }, { value: 'b' }] }), 'a\tx y\nb\t\n:done\n');
  t.equal(formatCompletion({ values: [] }), ':done\n');
  t.equal(formatCompletion({ files: true }), ':files\n');
  t.equal(formatCompletion({ values: [{ value: 'a\tb' }, { value: 'c\nd' }, { value: 'e' }] }), 'e\t\n:done\n',
    'a value that cannot travel as a line is not offered');
});
