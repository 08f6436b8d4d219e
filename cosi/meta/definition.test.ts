// definition: a renamed type answers to what users typed for its former name.
import t from 'tap';
import { fillDefinition, fillDefinitions, matchDefinitions, resolveDefinition } from './definition.ts';

t.test('a former type name, its plural and its singular name the renamed type', async (t) => {
  const d = fillDefinition({
    type: 'AddressSpecStatuses.net.appliance.dev', defaultNamespace: 'network',
    formerTypes: ['AddressStatuses.net.appliance.dev'],
  });
  t.same(d.formerTypes, ['AddressStatuses.net.appliance.dev'], 'kept in the definition (the wire reads it)');
  for (const name of ['addressstatuses.net.appliance.dev', 'AddressStatuses', 'addressstatus', 'addressspecstatus']) {
    t.equal(resolveDefinition([d], name)?.type, 'AddressSpecStatuses.net.appliance.dev', name);
  }
  const other = fillDefinition({ type: 'Addresses.net.appliance.dev', defaultNamespace: 'network' });
  t.same(matchDefinitions([d, other], 'address').map((x) => x.type), ['Addresses.net.appliance.dev'],
    'a name of the other type is still the other type\'s');
  t.equal(fillDefinition({ type: 'Links.net.appliance.dev', defaultNamespace: 'network' }).formerTypes, undefined,
    'no former names: none listed');
});

t.test('a former name another type still has is refused, naming both', async (t) => {
  t.throws(() => fillDefinitions([
    { type: 'AddressStatuses.net.appliance.dev', defaultNamespace: 'network' },
    { type: 'AddressSpecStatuses.net.appliance.dev', defaultNamespace: 'network',
      formerTypes: ['AddressStatuses.net.appliance.dev'] },
  ]), /alias "addressstatuses.*AddressSpecStatuses.*AddressStatuses/);
});
