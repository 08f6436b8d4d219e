import t from 'tap';
import { cmdlineFlag, parseCmdline } from './cmdline.ts';

t.test('parses the kernel command line', async (t) => {
  const c = parseCmdline('console=ttyS0 quiet  appliance.test.orphan '
    + 'ip=10.0.0.2::10.0.0.1:255.255.255.0:host:eth0:off "x=a b" console=tty0\n');
  t.equal(c.get('console'), 'tty0', 'last one wins');
  t.equal(c.get('quiet'), '');
  t.equal(c.get('ip'), '10.0.0.2::10.0.0.1:255.255.255.0:host:eth0:off');
  t.equal(c.get('x'), 'a b', 'quotes group spaces');
  t.ok(cmdlineFlag(c, 'appliance.test.orphan'));
  t.notOk(cmdlineFlag(c, 'missing'));
  t.notOk(cmdlineFlag(parseCmdline('a=0'), 'a'));
  t.ok(cmdlineFlag(parseCmdline('a=yes'), 'a'));
  t.equal(parseCmdline('').size, 0);
});
