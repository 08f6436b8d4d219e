// extension-launch: what the engine hands the launcher, and each way it can be wrong, named.
import t from 'tap';
import { decodeLaunch, encodeLaunch, EXTENSION_LAUNCH_ENV, type ExtensionLaunch } from './extension-launch.ts';

const launch: ExtensionLaunch = {
  name: 'hello', image: '/run/extensions/hello-abc', cgroup: '/sys/fs/cgroup/extensions/hello', uid: 61000,
  pluginSocket: '/run/cosi/plugins.sock', executable: '/usr/bin/python3', args: ['-u', '/opt/hello.py'],
  env: { A: 'b' }, capabilities: ['CAP_NET_BIND_SERVICE'], workingDir: '/',
};

t.test('what is encoded decodes the same', async (t) => {
  t.same(decodeLaunch(encodeLaunch(launch)), launch);
  const { cgroup: _, ...withoutGroup } = launch;
  t.same(decodeLaunch(encodeLaunch(withoutGroup)), withoutGroup, 'no cgroup: none');
});

t.test('unset, not JSON, or a field missing or of the wrong type: an Error saying which', async (t) => {
  t.match(decodeLaunch(undefined),
    { message: `${EXTENSION_LAUNCH_ENV} is not set: extensions are started by the engine` });
  t.match(decodeLaunch('{'), { message: new RegExp(`^${EXTENSION_LAUNCH_ENV} is not JSON`) });
  const { executable: _, ...noExe } = launch;
  t.match(decodeLaunch(JSON.stringify(noExe)), { message: /lacks a field or has one of the wrong type/ });
  t.match(decodeLaunch(JSON.stringify({ ...launch, args: '-u' })), { message: /wrong type/ });
  t.match(decodeLaunch(JSON.stringify({ ...launch, cgroup: 7 })), { message: /wrong type/ });
  t.match(decodeLaunch(JSON.stringify({ ...launch, uid: 0 })), { message: /wrong type/ }, 'never root');
  t.match(decodeLaunch(JSON.stringify({ ...launch, workingDir: 'srv' })), { message: /wrong type/ }, 'an absolute dir');
});
