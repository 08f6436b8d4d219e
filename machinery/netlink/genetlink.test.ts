// genetlink and ACPI event codecs against captured kernel messages: the nlctrl family
// description from a Debian 6.x host, and the power button event the appliance's
// kernel (6.1.192) multicast when QMP system_powerdown pressed it.
import t from 'tap';
import { decodeAcpiEvents, isPowerButton } from '../../init/boot/acpi-events.ts';
import { decodeFamily, decodeGenl, getFamilyRequest, GENL_ID_CTRL } from './genetlink.ts';
import { attrMap, decodeMessages, readStr } from './netlink.ts';

const NLCTRL_FAMILY = Buffer.from(
  '880000001000000007000000a6680000010200000b0002006e6c6374726c00000600010010000000080003000200000008000400'
    + '0000000008000500000000002c000600140001000800010003000000080002000e00000014000200080001000a00000008000200'
    + '0c0000001c0007001800010008000200100000000b0001006e6f746966790000',
  'hex',
);
const POWER_BUTTON = Buffer.from(
  '440000001400000000000000000000000101000030000100627574746f6e2f706f77657200000000000000004c4e58505752424e'
    + '3a303000000000008000000001000000',
  'hex',
);

t.test('CTRL_CMD_GETFAMILY request', async (t) => {
  const [m] = decodeMessages(getFamilyRequest(9, 'acpi_event'));
  t.equal(m!.type, GENL_ID_CTRL);
  t.equal(m!.seq, 9);
  const g = decodeGenl(m!);
  t.equal(g.cmd, 3, 'CTRL_CMD_GETFAMILY');
  t.equal(readStr(attrMap(g.attrs).get(2)), 'acpi_event', 'CTRL_ATTR_FAMILY_NAME');
});

t.test('a family description: id, name, multicast groups', async (t) => {
  const [m] = decodeMessages(NLCTRL_FAMILY);
  const f = decodeFamily(m!);
  t.equal(f.id, 0x10);
  t.equal(f.name, 'nlctrl');
  t.same([...f.groups], [['notify', 0x10]]);
  t.throws(() => decodeFamily({ ...m!, type: 0x14 }), /expected a family description, got type 20/);
});

t.test('the ACPI power button event', async (t) => {
  const events = decodeAcpiEvents(POWER_BUTTON, 0x14);
  t.same(events, [{ deviceClass: 'button/power', busId: 'LNXPWRBN:00', type: 0x80, data: 1 }]);
  t.ok(isPowerButton(events[0]!));
  t.same(decodeAcpiEvents(POWER_BUTTON, 0x15), [], 'another family id is not ours');
  t.notOk(isPowerButton({ deviceClass: 'ac_adapter', busId: 'ACPI0003:00', type: 0x80, data: 1 }));
  const short = Buffer.from(POWER_BUTTON.subarray(0, 40));
  short.writeUInt32LE(40, 0);
  t.same(decodeAcpiEvents(short, 0x14), [], 'a truncated event is skipped, not misread');
});
