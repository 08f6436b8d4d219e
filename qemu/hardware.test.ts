// Hardware whose drivers are modules, loaded by modalias: a machine with an Intel e1000e NIC
// (QEMU's, PCI id 8086:10d3) gets its driver from PID 1 before anything else runs and a DHCP lease
// through it; an e1000 NIC plugged in later (as a cloud attaches one) gets its driver from the system plugin and
// becomes eth1. Each device is listed with its driver and matching modules. The disks a system image is read from
// (NVMe, virtio-scsi, USB storage behind xHCI) are built in, since stage0 mounts the image before any module can
// load: a USB stick plugged in later is a BlockDevice with nothing loaded for it.
import t from 'tap';
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootWithApi } from './api-vm.ts';

const dir = mkdtempSync(join(tmpdir(), 'hardware-'));
const { vm, run, poll } = await bootWithApi({ nic: 'e1000e' }, 'dhcp');
t.teardown(() => vm.kill());

interface Device {
  metadata: { id: string };
  spec: { driver: string; modules?: string[]; vendor: string; device: string };
}
const devices = async () => (JSON.parse((await run(['get', 'devices', '-o', 'json'])).out) as {
  items: Device[];
}).items;

t.test('PID 1 loads e1000e for the NIC before the plugins start, and eth0 gets a lease through it', async (t) => {
  t.match(vm.console(), /drivers: loaded e1000e \(pci 0000:00:\w+\.\d\)/, 'the coldplug says so');
  const lease = JSON.parse((await poll(['get', 'leases', 'eth0', '-o', 'json'], /bound/)).out) as {
    spec: { state: string; address: string };
  };
  t.match(lease.spec, { state: 'bound', address: '10.0.2.15/24' });
  // Modules and devices are the system plugin's: it starts with the second wave (once the first runs).
  t.match((await poll(['get', 'lsmod', 'e1000e'], /e1000e/, 120_000)).out, /e1000e/, 'KernelModuleStatus lists it');
  await poll(['get', 'devices', '-o', 'json'], /(?=[\s\S]*"10d3")(?=[\s\S]*"virtio\/)/, 60_000);
  const nic = (await devices()).find((d) => d.spec.vendor === '8086' && d.spec.device === '10d3');
  t.ok(nic, 'the NIC is a Device');
  t.match(nic?.spec, { driver: 'e1000e', modules: ['e1000e'] });
  t.match(nic?.metadata.id, /^pci\/0000:/);
  const virtio = (await devices()).find((d) => d.metadata.id.startsWith('virtio/'));
  t.ok(virtio, 'a virtio device is listed too');
  t.same(virtio?.spec.modules ?? [], [], 'a device whose driver is built in names no module');
  t.ok(virtio?.spec.driver, `and has its driver: ${virtio?.spec.driver}`);
});

t.test('a NIC plugged in later: the plugin loads its module (e1000), and its link appears', async (t) => {
  const before = (await run(['get', 'lsmod'])).out;
  t.match(before, /\se1000e\s/, 'lsmod lists e1000e (its table)');
  t.notMatch(before, /\se1000\s/, 'but not e1000, before');
  await vm.hotplugNic('nic1', 'e1000', '52:54:00:00:00:e1', 'hp2');
  t.match((await poll(['get', 'lsmod', 'e1000'], /e1000/, 60_000)).out, /\se1000\s/, 'KernelModuleStatus lists it');
  t.match(vm.console(), /loaded e1000 for pci /, 'the plugin logged it');
  // lsmod's controller may see the module before device-status has put the Device it loaded it for.
  const bound = /\{(?=[^{}]*"device": "100e")(?=[^{}]*"driver": "e1000")[^{}]*\}/;
  await poll(['get', 'devices', '-o', 'json'], bound, 60_000);
  const nic = (await devices()).find((d) => d.spec.vendor === '8086' && d.spec.device === '100e');
  t.match(nic?.spec, { driver: 'e1000', modules: ['e1000'] }, 'the NIC (82540EM) is a Device bound to e1000');
  t.match((await poll(['get', 'links', 'eth1', '-o', 'yaml'], /52:54:00:00:00:e1/, 60_000)).out,
    /mac: "?52:54:00:00:00:e1/, 'and eth1 is a link with its MAC');
});

t.test('a USB stick plugged in later: xHCI and usb-storage are built in, so nothing is loaded', async (t) => {
  const disk = join(dir, 'stick.raw');
  writeFileSync(disk, '');
  truncateSync(disk, 64 * 2 ** 20);
  await vm.hotplugDisk('hot0', disk, 'hp1', 'usb-storage');
  t.match((await poll(['get', 'blockdevices', 'sda', '-o', 'yaml'], /sizeBytes/, 60_000)).out,
    /sizeBytes: "?67108864/, 'sda, 64 MiB');
  // Devices are listed at their uevents, a moment apart from the block device's.
  await poll(['get', 'devices', '-o', 'json'], /(?=[\s\S]*"usb-storage")(?=[\s\S]*"xhci_hcd")/, 60_000);
  const all = await devices();
  t.match(all.find((d) => d.spec.driver === 'xhci_hcd')?.metadata.id, /^pci\//, 'the controller is bound to xhci_hcd');
  const stick = all.find((d) => d.spec.driver === 'usb-storage');
  t.ok(stick, 'the stick is a Device bound to usb-storage');
  t.same(stick?.spec.modules ?? [], [], 'a driver built in names no module');
  t.notMatch(vm.console(), /loaded (xhci_pci|usb_storage) /, 'nothing was loaded for them');
  await vm.unplugDisk('hot0');
  const after = (await poll(['get', 'blockdevices', '-o', 'yaml'], /^(?![\s\S]*\bsda\b)/, 60_000)).out;
  t.notMatch(after, /\bsda\b/, 'unplugged with its controller: sda is gone');
});
