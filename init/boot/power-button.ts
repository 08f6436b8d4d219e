// power-button: the ACPI power button (QMP system_powerdown presses it) reaches user
// space twice: as an acpi_event over generic netlink (acpi-events.ts), which we use,
// and as KEY_POWER on an evdev device, the fallback for a kernel without the former.
import { createReadStream, openSync } from 'node:fs';
import type { Native } from '../../native/index.ts';
import type { Logger } from '../../machinery/log.ts';
import { listDir, readOptional } from '../../machinery/sys/optional-fs.ts';
import { isPowerButton, watchAcpiEvents } from './acpi-events.ts';

const EV_KEY = 1;
const KEY_POWER = 116;
/** struct input_event on 64-bit: timeval (16) + type u16 + code u16 + value s32. */
export const INPUT_EVENT_SIZE = 24;

/** Does a sysfs `capabilities/key` bitmap (hex words, most significant first) include `code`? */
export function hasKey(bitmap: string, code: number): boolean {
  const words = bitmap.trim().split(/\s+/).reverse(); // now least significant first
  const bitsPerWord = 64; // unsigned long on x86_64
  const word = words[Math.floor(code / bitsPerWord)];
  if (!word) return false;
  return (BigInt('0x' + word) >> BigInt(code % bitsPerWord) & 1n) === 1n;
}

/** KEY_POWER presses (value 1) in a chunk of input_event records. */
export function powerPresses(chunk: Buffer): number {
  let n = 0;
  for (let off = 0; off + INPUT_EVENT_SIZE <= chunk.length; off += INPUT_EVENT_SIZE) {
    if (chunk.readUInt16LE(off + 16) === EV_KEY && chunk.readUInt16LE(off + 18) === KEY_POWER
      && chunk.readInt32LE(off + 20) === 1) n++;
  }
  return n;
}

export function findPowerButtons(sysInput = '/sys/class/input'): string[] {
  return listDir(sysInput).filter((n) => n.startsWith('event')).filter((n) => {
    const keys = readOptional(`${sysInput}/${n}/device/capabilities/key`); // absent: a device without keys
    return keys !== undefined && hasKey(keys, KEY_POWER);
  }).map((n) => `/dev/input/${n}`);
}

/** Watches every power-button device; each blocks one libuv pool thread on read(2).
 * Devices are opened synchronously: once this returns (before the ready line), a
 * press is queued in the kernel's evdev buffer even if no read is pending yet. */
export function watchPowerButton(log: Logger, onPress: () => void): string[] {
  const devices = findPowerButtons();
  for (const dev of devices) {
    let fd: number;
    try {
      fd = openSync(dev, 'r');
    } catch (e) {
      log.warn(`${dev}: ${(e as Error).message}; power button not watched`);
      continue;
    }
    const stream = createReadStream(dev, { fd, highWaterMark: INPUT_EVENT_SIZE * 16 });
    let rest = Buffer.alloc(0);
    stream.on('data', (d) => {
      const buf = Buffer.concat([rest, d as Buffer]);
      const whole = buf.length - (buf.length % INPUT_EVENT_SIZE);
      rest = buf.subarray(whole);
      if (powerPresses(buf.subarray(0, whole)) > 0) {
        log.info(`power button pressed (${dev})`);
        onPress();
      }
    });
    stream.on('error', (e) => log.warn(`${dev}: ${e.message}; power button not watched`));
  }
  return devices;
}

/** Watches the power button through ACPI genetlink events, else evdev; returns what it watches. */
export function watchPower(n: Native, log: Logger, onPress: () => void): string {
  try {
    const stop = watchAcpiEvents(n, (e) => {
      log.info(`acpi_event ${e.deviceClass} ${e.busId} type=0x${e.type.toString(16)} data=${e.data}`);
      if (isPowerButton(e)) {
        log.info(`power button pressed (acpi_event ${e.busId})`);
        onPress();
      }
    });
    if (stop) return 'acpi_event (generic netlink)';
  } catch (e) {
    log.warn(`ACPI events over generic netlink unavailable: ${(e as Error).message}; trying evdev`);
  }
  const devices = watchPowerButton(log, onPress);
  return devices.length ? `evdev ${devices.join(', ')}` : 'nothing (no ACPI events, no power button device)';
}
