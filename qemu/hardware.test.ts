// Hardware whose drivers are modules, loaded by modalias: a machine with an Intel e1000e NIC
// (QEMU's, PCI id 8086:10d3) gets its driver from PID 1 before anything else runs and a DHCP lease
// through it; an xHCI controller with a USB stick plugged in later gets its drivers from the system plugin
// (xhci_pci for the controller, then usb_storage for the stick on it), and the stick shows as a BlockDevice.
// Each device is listed with its driver and matching modules. (NVMe and virtio-scsi are built in: stage0 reads
// the system image from them before any module can be loaded.)
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
  // Modules and devices are the system plugin's: it starts once the network is configured (the second wave).
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

t.test('an xHCI controller and a USB stick plugged in later: the plugin loads both drivers', async (t) => {
  const lsmod = (await run(['get', 'lsmod'])).out;
  t.notMatch(lsmod, /^(xhci_pci|usb_storage)\s/m, 'neither loaded before');
  const disk = join(dir, 'stick.raw');
  writeFileSync(disk, '');
  truncateSync(disk, 64 * 2 ** 20);
  await vm.hotplugDisk('hot0', disk, 'hp1', 'usb-storage');
  t.match((await poll(['get', 'blockdevices', 'sda', '-o', 'yaml'], /sizeBytes/, 60_000)).out,
    /sizeBytes: "?67108864/, 'sda, 64 MiB');
  t.match((await run(['get', 'lsmod', 'usb_storage'])).out, /usb_storage/);
  const all = await devices();
  const controller = all.find((d) => d.spec.modules?.includes('xhci_pci'));
  t.ok(controller, 'the controller is a Device matching xhci_pci');
  t.match(controller?.metadata.id, /^pci\//);
  t.match(all.find((d) => d.spec.driver === 'usb-storage')?.spec, { modules: ['usb_storage'] },
    'the stick is a Device bound to usb-storage');
  t.match(vm.console(), /loaded xhci_pci for pci /, 'the plugin logged the controller\'s');
  t.match(vm.console(), /loaded usb_storage for usb /, 'and the stick\'s');
});
