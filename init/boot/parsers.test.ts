// Unit tests for the small /proc and /sys parsers PID 1 uses.
import t from 'tap';
import { parseMeminfo } from '../../machinery/sys/meminfo.ts';
import { parseMounts } from '../../machinery/sys/mount-table.ts';
import { hasKey, INPUT_EVENT_SIZE, powerPresses } from './power-button.ts';
import { parseStat } from '../../machinery/sys/proc-table.ts';
import {
  formatMilestone, formatReady, milestoneLine, parseMilestones, parseReady,
} from './ready-line.ts';

t.test('stat: comm with spaces and parens', async (t) => {
  const s = parseStat('42 (a (b) c) Z 1 42 42 0 -1 4194560 0 0');
  t.same([s.pid, s.comm, s.state, s.ppid, s.flags], [42, 'a (b) c', 'Z', 1, 4194560]);
});

t.test('mounts: octal escapes', async (t) => {
  const m = parseMounts('proc /proc proc rw,nosuid 0 0\n/dev/vda /mnt/with\\040space ext4 rw 0 0\n');
  t.equal(m[1]!.target, '/mnt/with space');
  t.equal(m[0]!.fstype, 'proc');
});

t.test('meminfo', async (t) => {
  const m = parseMeminfo('MemTotal:         250000 kB\nMemFree:  1 kB\nMemAvailable:     200000 kB\n');
  t.equal(m.get('MemTotal')! - m.get('MemAvailable')!, 50000);
});

t.test('evdev key bitmap and KEY_POWER presses', async (t) => {
  // What the ACPI power button device shows in capabilities/key: bit 116 set.
  t.ok(hasKey('10000000000000 0', 116));
  t.notOk(hasKey('0', 116));
  t.notOk(hasKey('10000000000000 0', 115));
  const ev = Buffer.alloc(INPUT_EVENT_SIZE * 3);
  const put = (i: number, type: number, code: number, value: number) => {
    ev.writeUInt16LE(type, i * 24 + 16);
    ev.writeUInt16LE(code, i * 24 + 18);
    ev.writeInt32LE(value, i * 24 + 20);
  };
  put(0, 1, 116, 1);
  put(1, 0, 0, 0);
  put(2, 1, 116, 0); // press, SYN, release
  t.equal(powerPresses(ev), 1);
});

t.test('ready line round trip', async (t) => {
  const f = { uptime: 3.851, initStart: 3.105, mainStart: 3.671, memUsedKiB: 106448 };
  t.same(parseReady(`[init 3.868] ${formatReady(f)}`), f);
  t.equal(parseReady('nothing here'), null);
});

t.test('milestone lines round trip, in order, a partial line not counted', async (t) => {
  const plugins = { name: 'plugins', uptime: 9.5, memUsedKiB: 150000 };
  const network = { name: 'network', uptime: 12.25, memUsedKiB: 151000 };
  const console = `[init 9.5] ${formatMilestone(plugins)}\nnoise\n[init 12.3] ${formatMilestone(network)}\n`
    + '[init 13] APPLIANCE MILESTONE later uptime=13.0';
  t.same(parseMilestones(console), [plugins, network]);
  t.same(parseMilestones('nothing here'), []);
  t.ok(milestoneLine('network').test(console) && !milestoneLine('later').test(console), 'one milestone\'s line');
});
