import t from 'tap';
import { MemoryState } from '../../cosi/state/memory-state.ts';
import { newResource } from '../../cosi/resource/resource.ts';
import { ControllerRuntime } from '../../cosi/controller/runtime.ts';
import { consoleSummary, summaryLine } from './console-summary.ts';
import {
  CONFIG_STATUS_TYPE, HOSTNAME_SPEC_STATUS_TYPE, LINK_STATUS_TYPE, NETWORK_NS, RUNTIME_NS,
} from '../../proto/gen/resource-types.ts';
import { CONFIG_STATUS_ID } from '../../machinery/model/singleton-ids.ts';

t.test('one line: hostname, addresses but loopback and link-local, config, API; written again on a change',
  async (t) => {
    const s = new MemoryState();
    t.equal(summaryLine(s), 'machine: (no hostname); no address; no config yet; API starting');
    const lines: string[] = [];
    const runtime = new ControllerRuntime(s, { log: () => ({ info() {}, warn() {}, error() {} }) });
    runtime.register(consoleSummary(s, (l) => lines.push(l), 'engine'));
    runtime.start();
    t.teardown(() => runtime.stop());
    await runtime.watching();
    const link = (id: string, addresses: string[]) =>
      s.create(newResource({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE, id }, { addresses }));
    await link('lo', ['127.0.0.1/8']);
    await link('eth0', ['10.0.2.15/24', 'fe80::5054:ff:fe12:3456/64', 'fd00::15/64']);
    await s.create(newResource({ namespace: NETWORK_NS, type: HOSTNAME_SPEC_STATUS_TYPE, id: 'hostname' },
      { hostname: 'node1', fqdn: 'node1.example.test' }));
    await s.create(newResource({ namespace: RUNTIME_NS, type: CONFIG_STATUS_TYPE, id: CONFIG_STATUS_ID },
      { state: 'applied', source: 'fw-cfg' }));
    await new Promise((r) => setTimeout(r, 700));
    t.same(lines, ['machine: node1.example.test; 10.0.2.15/24 (eth0), fd00::15/64 (eth0); config applied from fw-cfg; '
      + 'API starting'], 'a burst of changes gives one line');
  });
