// launch: boots the appliance's artifacts under QEMU. TCG by default (KVM hangs on
// the machines we test on); KVM only when asked. The serial console is captured to
// a file and optionally copied to the terminal; QMP is always on.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connectQmp, type QmpClient } from './qmp.ts';

export interface PortForward { proto?: 'tcp' | 'udp'; hostAddr?: string; hostPort: number; guestPort: number }
/**
 * Each guest connection to guestAddr:guestPort is relayed (socat) to a host address, e.g. a metadata
 * server on 127.0.0.1.
 */
export interface GuestForward { guestAddr: string; guestPort: number; hostAddr?: string; hostPort: number }
/**
 * A drive and the controller it hangs on: virtio-blk (default), an IDE CD-ROM, a USB stick (xHCI), an NVMe
 * namespace (as EC2's Nitro gives its disks) or a virtio-scsi disk (as GCE does).
 */
export interface Disk {
  file: string; format?: 'raw' | 'qcow2' | 'vmdk'; id?: string; readonly?: boolean;
  /**
   * ahci: a SATA disk on q35's built-in AHCI controller; ide: a disk on the pc machine's PIIX IDE, the N-th of the
   * list at IDE index N (as `qemu-system-x86_64 -hda` gives it, QEMU's default CD-ROM kept beside it).
   */
  interface?: 'virtio' | 'cdrom' | 'usb' | 'nvme' | 'scsi' | 'ahci' | 'ide';
  /** The serial number the guest reads (virtio, usb, scsi; NVMe disks get nvme<N>). */
  serial?: string;
}
/** A fw_cfg item: from a file, or a string (QEMU's option syntax: a comma must be written twice). */
export interface FwCfg { name: string; file?: string; string?: string }

/** OVMF from Debian's ovmf: the code read-only, a copy of the variable store per VM. */
export const OVMF = { code: '/usr/share/OVMF/OVMF_CODE_4M.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.fd' };

/**
 * QEMU's clock by instructions executed (one per ns), never ahead of them: guest time that is the same on a loaded
 * host as on an idle one (boot figures compare across runs; TCG wall time does not).
 */
export const ICOUNT_ARGS: readonly string[] = ['-icount', 'shift=0,align=off,sleep=on'];

export interface VmOptions {
  kernel: string;
  initrd: string;
  cmdline: string;
  /**
   * kernel (default): QEMU loads kernel, initrd and cmdline itself. disk: the firmware boots
   * the first disk (its loader picks kernel and command line; `append` is not used). network:
   * the NIC's iPXE boots `tftp.bootfile` from slirp's TFTP server (the script picks them).
   */
  bootFrom?: 'kernel' | 'disk' | 'network';
  /** slirp's TFTP server: the folder it serves and the file its DHCP offers as the boot file. */
  tftp?: { dir: string; bootfile: string };
  /** The NIC: virtio-net (default; its driver is built in) or an Intel e1000e (a module, loaded by modalias). */
  nic?: Nic;
  /**
   * The NICs, first to last (instead of `nic`; [] for none). The first is on the user network with the
   * forwards; each other on a user network of its own (10.0.3.0/24, 10.0.4.0/24, ...), reaching nothing.
   */
  nics?: Nic[];
  /**
   * This many virtio NICs on one QEMU hub joined to the user network with the forwards (instead of `nics`), as two
   * ports of a server to one switch: device ids nic0, nic1, ... (QMP set_link takes a port's link down), MACs
   * 52:54:00:00:00:a0, :a1, ...
   */
  hubNics?: number;
  /** q35 (default) or pc (i440fx, PIIX IDE), QEMU's two x86 machines. */
  machine?: 'q35' | 'pc';
  /**
   * Keep QEMU's default devices, as a user's VM has them (no -nodefaults): an empty CD-ROM drive (q35: on
   * AHCI; pc: on IDE), a floppy drive (pc) and VGA. The default NIC is replaced by `nics`.
   */
  defaults?: boolean;
  /** seabios (QEMU's default, legacy BIOS) or ovmf (UEFI). */
  firmware?: 'seabios' | 'ovmf';
  /** Appended to cmdline (test switches, debug flags). */
  append?: string[];
  memoryMiB?: number;
  cpus?: number;
  accel?: 'tcg' | 'kvm';
  /** Console log file; default: a temp file removed with the VM's temp dir. */
  consoleFile?: string;
  consoleToTerminal?: boolean;
  hostfwd?: PortForward[];
  guestfwd?: GuestForward[];
  disks?: Disk[];
  fwcfg?: FwCfg[];
  /** -smbios arguments: "type=1,serial=ds=nocloud-net;s=http://10.0.2.100/", "type=1,manufacturer=Amazon EC2". */
  smbios?: string[];
  /**
   * Let the guest reach the host (10.0.2.2) and, through it, any address. Default
   * false: the guest reaches only what hostfwd/guestfwd name (slirp restrict=on), so a
   * test never sends traffic beyond loopback.
   */
  hostAccess?: boolean;
  /**
   * slirp's network instead of 10.0.2.0/24: its address, the host's (gateway) and the first
   * DHCP lease. A guest in 169.254.0.0/16 reaches 169.254.169.254 through guestfwd, as on EC2 and GCE.
   */
  slirpNet?: { net: string; host: string; dhcpStart: string };
  /** Exit QEMU instead of rebooting the guest (default true). */
  noReboot?: boolean;
  extraArgs?: string[];
  qemuBinary?: string;
}

/**
 * ip= for the address slirp would lease. slirp's DHCP names no router when restricted (restrict=on, so
 * that nothing leaves the host), and sources that need the network wait for a default route.
 */
export function slirpStaticIp(net?: VmOptions['slirpNet']): string {
  if (!net) return 'ip=10.0.2.15::10.0.2.2:255.255.255.0::eth0:off';
  const prefix = Number(net.net.split('/')[1]);
  const mask = [24, 16, 8, 0].map((shift) => ((0xffffffff << (32 - prefix)) >>> shift) & 0xff).join('.');
  return `ip=${net.dhcpStart}::${net.host}:${mask}::eth0:off`;
}

/** NIC models: virtio-net, Intel e1000e (q35's default) and e1000 (pc's), Realtek RTL8139. */
export type Nic = 'virtio' | 'e1000e' | 'e1000' | 'rtl8139';
const NIC_DEVICES: Record<Nic, string> = {
  virtio: 'virtio-net-pci', e1000e: 'e1000e', e1000: 'e1000', rtl8139: 'rtl8139',
};

export interface VmExit { code: number | null; signal: NodeJS.Signals | null }

export interface Vm {
  readonly process: ChildProcess;
  readonly qmpSocket: string;
  readonly exited: Promise<VmExit>;
  /** Everything the serial console printed so far. */
  console(): string;
  /**
   * Resolves with the `nth` match (default the first) of `re` on the console, rejects on timeout or QEMU
   * exit: the nth ready line is the nth boot of a machine that reboots in place.
   */
  waitFor(re: RegExp, timeoutMs: number, nth?: number): Promise<RegExpMatchArray>;
  qmp(): Promise<QmpClient>;
  /**
   * Hot-plugs a raw disk image as a virtio-blk device (or an NVMe controller, or a USB stick on an xHCI controller
   * plugged in with it, `id`-xhci) into a spare root port.
   */
  hotplugDisk(id: string, file: string, port?: 'hp1' | 'hp2', device?: 'virtio-blk-pci' | 'nvme' | 'usb-storage'):
    Promise<void>;
  /** Unplugs it (the guest acknowledges through PCIe hotplug) and drops the backend (and a stick's controller). */
  unplugDisk(id: string): Promise<void>;
  /** Hot-plugs a NIC on a user network of its own (restricted: no way out) into a spare root port. */
  hotplugNic(id: string, nic: Nic, mac: string, port?: 'hp1' | 'hp2'): Promise<void>;
  /** Presses the ACPI power button and waits for QEMU to exit; quits QEMU after `timeoutMs`. */
  powerdown(timeoutMs?: number): Promise<VmExit & { clean: boolean }>;
  kill(): void;
}

// QEMU runs in its own process group (so a terminal's Ctrl-C reaches us first), which
// also means it would outlive us: every VM still running dies with this process,
// whether it exits or is told to stop (a test runner's timeout sends SIGTERM).
const running = new Set<ChildProcess>();
const killAll = () => {
  for (const c of running) c.kill('SIGKILL');
}; // kill() reports a gone child by returning false
process.on('exit', killAll);
for (const sig of ['SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    killAll();
    if (process.listenerCount(sig) === 1) {
      process.removeAllListeners(sig);
      process.kill(process.pid, sig);
    }
  });
}

export function defaultAccel(): 'tcg' | 'kvm' {
  return process.env.APPLIANCE_ACCEL === 'kvm' ? 'kvm' : 'tcg';
}

export function qemuArgs(o: VmOptions, qmpSocket: string): string[] {
  const accel = o.accel ?? defaultAccel();
  const cmdline = [o.cmdline.trim(), ...(o.append ?? [])].filter(Boolean).join(' ');
  const machine = o.machine ?? 'q35';
  const args = [
    '-machine', `${machine},accel=${accel}`,
    '-cpu', accel === 'kvm' ? 'host' : 'max',
    '-smp', String(o.cpus ?? 1),
    '-m', `${o.memoryMiB ?? 256}M`,
    // Only a direct boot hands QEMU the kernel; a disk's or a network's loader picks its own.
    ...((o.bootFrom ?? 'kernel') === 'kernel' ? ['-kernel', o.kernel, '-initrd', o.initrd, '-append', cmdline] : []),
    '-display', 'none', ...(o.defaults ? [] : ['-vga', 'none', '-nodefaults']),
    '-serial', 'stdio', '-monitor', 'none',
    '-qmp', `unix:${qmpSocket},server=on,wait=off`,
    '-device', 'virtio-rng-pci',
  ];
  if (machine === 'q35') args.push(
    // Spare PCIe root ports: q35's root bus takes no hot-plugged devices. Native PCIe
    // hotplug (not QEMU's ACPI default), which the kernel's pciehp handles.
    '-global', 'ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off',
    '-device', 'pcie-root-port,id=hp1,chassis=1,slot=1',
    '-device', 'pcie-root-port,id=hp2,chassis=2,slot=2',
  );
  const fwd = [
    ...(o.hostfwd ?? []).map(
      (f) => `hostfwd=${f.proto ?? 'tcp'}:${f.hostAddr ?? '127.0.0.1'}:${f.hostPort}-:${f.guestPort}`,
    ),
    // The cmd: form, one socat per guest connection: the chardev form (-tcp:host:port) is one
    // connection for the VM's life, and a server that closes it (a fault test) cuts the guest off.
    ...(o.guestfwd ?? []).map(
      (f) => `guestfwd=tcp:${f.guestAddr}:${f.guestPort}-cmd:socat - TCP:${f.hostAddr ?? '127.0.0.1'}:${f.hostPort}`,
    ),
  ];
  if (o.hubNics) {
    const user = ['user', 'id=n0', ...(o.hostAccess ? [] : ['restrict=on']), ...fwd];
    args.push('-netdev', user.join(','), '-netdev', 'hubport,id=hub-up,hubid=0,netdev=n0');
    for (let i = 0; i < o.hubNics; i++) {
      args.push('-netdev', `hubport,id=hub${i},hubid=0`,
        '-device', `${NIC_DEVICES.virtio},netdev=hub${i},id=nic${i},mac=52:54:00:00:00:a${i}`);
    }
  }
  (o.hubNics ? [] : o.nics ?? [o.nic ?? 'virtio']).forEach((nic, i) => {
    const netdev = i === 0 ? ['user', 'id=n0', ...(o.hostAccess ? [] : ['restrict=on']),
      ...(o.slirpNet ? [`net=${o.slirpNet.net}`, `host=${o.slirpNet.host}`, `dhcpstart=${o.slirpNet.dhcpStart}`] : []),
      ...(o.tftp ? [`tftp=${o.tftp.dir}`, `bootfile=${o.tftp.bootfile}`] : []),
      ...fwd] : ['user', `id=n${i}`, 'restrict=on', `net=10.0.${2 + i}.0/24`];
    args.push('-netdev', netdev.join(','), '-device', [NIC_DEVICES[nic], `netdev=n${i}`,
      ...(i === 0 && o.bootFrom === 'network' ? ['bootindex=1'] : [])].join(','));
  });
  if (o.firmware === 'ovmf') {
    const vars = join(dirname(qmpSocket), 'OVMF_VARS.fd');
    copyFileSync(OVMF.vars, vars);
    args.push('-drive', `if=pflash,format=raw,readonly=on,file=${OVMF.code}`,
      '-drive', `if=pflash,format=raw,file=${vars}`);
  }
  const controllers = new Set<string>();
  const controller = (id: string, device: string) => {
    if (!controllers.has(id)) {
      controllers.add(id);
      args.push('-device', `${device},id=${id}`);
    }
  };
  (o.disks ?? []).forEach((d, i) => {
    const id = d.id ?? `disk${i}`;
    const cdrom = d.interface === 'cdrom';
    const readonly = d.readonly || cdrom ? ',readonly=on' : '';
    if (d.interface === 'ide') {
      // As `-hda` does: a -device on the IDE bus would make QEMU leave out its default CD-ROM (ide1-cd0), which this
      // interface is here to keep beside the disk. SeaBIOS boots the first IDE disk unasked.
      args.push('-drive', `file=${d.file},format=${d.format ?? 'raw'},if=ide,index=${i},id=${id}${readonly}`);
      return;
    }
    args.push('-drive', `file=${d.file},format=${d.format ?? 'raw'},if=none,id=${id}${cdrom ? ',media=cdrom' : ''}`
      + readonly);
    const boot = o.bootFrom === 'disk' && i === 0 ? ',bootindex=1' : '';
    const dev = `drive=${id},id=${id}-dev${boot}${d.serial && d.interface !== 'nvme' ? `,serial=${d.serial}` : ''}`;
    switch (d.interface ?? 'virtio') {
      case 'virtio':
        args.push('-device', `virtio-blk-pci,${dev}`);
        break;
      // q35's built-in AHCI controller has six ports, ide.0 to ide.5: one per disk, by its place in the list.
      case 'cdrom':
        args.push('-device', `ide-cd,bus=ide.${i + 1},${dev}`);
        break;
      case 'usb':
        controller('xhci', 'qemu-xhci');
        args.push('-device', `usb-storage,bus=xhci.0,${dev}`);
        break;
      case 'nvme':
        args.push('-device', `nvme,serial=nvme${i},${dev}`);
        break;
      case 'scsi':
        controller('scsi', 'virtio-scsi-pci');
        args.push('-device', `scsi-hd,bus=scsi.0,${dev}`);
        break;
      // Port 0 of q35's AHCI.
      case 'ahci':
        args.push('-device', `ide-hd,bus=ide.0,${dev}`);
        break;
    }
  });
  for (const f of o.fwcfg ?? []) args.push(
    '-fw_cfg', f.file ? `name=${f.name},file=${f.file}` : `name=${f.name},string=${f.string ?? ''}`,
  );
  for (const x of o.smbios ?? []) args.push('-smbios', x);
  if (o.noReboot ?? true) args.push('-no-reboot');
  args.push(...(o.extraArgs ?? []));
  return args;
}

export function launch(o: VmOptions): Vm {
  const dir = mkdtempSync(join(tmpdir(), 'appliance-vm-'));
  const qmpSocket = join(dir, 'qmp.sock');
  const consoleFile = o.consoleFile ?? join(dir, 'console.log');
  const log = createWriteStream(consoleFile);
  // Own process group: a terminal's Ctrl-C reaches us, not QEMU, so we can power down cleanly.
  const child = spawn(o.qemuBinary ?? 'qemu-system-x86_64', qemuArgs(o, qmpSocket), {
    stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    text += d.toString();
    log.write(d);
    if (o.consoleToTerminal) process.stdout.write(d);
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let done = false;
  const exited = new Promise<VmExit>((resolve) => {
    child.on('exit', (code, signal) => {
      done = true;
      // The directory holds the QMP socket and the firmware's variables, and the console log unless one was given
      // elsewhere: then it goes at once (npm start exits right after), else once the log is written.
      const removeDir = () => rmSync(dir, { recursive: true, force: true });
      if (o.consoleFile) {
        log.end();
        removeDir();
      } else log.end(removeDir);
      for (const w of waiters) w();
      resolve({ code, signal });
    });
    child.on('error', (e) => {
      text += `\n[launch] cannot start QEMU: ${e.message}\n`;
      done = true;
      resolve({ code: null, signal: null });
    });
  });

  let qmpClient: Promise<QmpClient> | undefined;
  const vm: Vm = {
    process: child,
    qmpSocket,
    exited,
    console: () => text,
    waitFor(re, timeoutMs, nth = 1) {
      const every = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = nth === 1 ? re.exec(text) : [...text.matchAll(every)][nth - 1];
          if (m) {
            cleanup();
            resolve(m);
          } else if (done) {
            cleanup();
            reject(new Error(`QEMU exited before ${re} appeared on the console; last output:\n${text.slice(-3000)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          const which = nth === 1 ? `${re}` : `match #${nth} of ${re}`;
          reject(new Error(`timed out after ${timeoutMs}ms waiting for ${which}; last output:\n${text.slice(-3000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    qmp: () => (qmpClient ??= connectQmp(qmpSocket)),
    async hotplugDisk(id, file, port = 'hp1', device = 'virtio-blk-pci') {
      const q = await vm.qmp();
      await q.execute('blockdev-add', {
        driver: 'raw', 'node-name': `${id}-node`, file: { driver: 'file', filename: file },
      });
      if (device === 'usb-storage') {
        await q.execute('device_add', { driver: 'qemu-xhci', id: `${id}-xhci`, bus: port });
        await q.execute('device_add', { driver: device, drive: `${id}-node`, id, bus: `${id}-xhci.0`, serial: id });
        return;
      }
      await q.execute('device_add', {
        driver: device, drive: `${id}-node`, id, bus: port, ...(device === 'nvme' ? { serial: id } : {}),
      });
    },
    async unplugDisk(id) {
      const q = await vm.qmp();
      // A stick goes with its controller (the port's device); the backend only after the guest let go of it.
      const xhci = `${id}-xhci`;
      const qdev = (await q.execute('qom-list', { path: `/machine/peripheral` }) as { name: string }[])
        .some((p) => p.name === xhci) ? xhci : id;
      await q.execute('device_del', { id: qdev });
      for (let i = 0; i < 100; i++) {
        if (q.events.some((e) => e.event === 'DEVICE_DELETED' && (e.data as { device?: string })?.device === qdev)) {
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      await q.execute('blockdev-del', { 'node-name': `${id}-node` });
    },
    async hotplugNic(id, nic, mac, port = 'hp2') {
      const q = await vm.qmp();
      await q.execute('netdev_add', { type: 'user', id: `${id}-net`, restrict: true });
      await q.execute('device_add', { driver: NIC_DEVICES[nic], netdev: `${id}-net`, id, bus: port, mac });
    },
    async powerdown(timeoutMs = 30_000) {
      const q = await vm.qmp();
      await q.execute('system_powerdown');
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref());
      const r = await Promise.race([exited, timeout]);
      if (r !== 'timeout') return { ...r, clean: true };
      // QEMU closes QMP as it quits, so the answer may never come; its exit is what counts.
      void q.execute('quit').catch((e: Error) => process.stderr.write(`qemu: quit: ${e.message}\n`));
      return { ...(await exited), clean: false };
    },
    kill: () => { if (!done) child.kill('SIGKILL'); },
  };
  return vm;
}
