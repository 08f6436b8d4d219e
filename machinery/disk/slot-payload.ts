// slot-payload: what a system carries besides its kernel and initramfs: the extensions an appliance bakes in and
// the machine config it boots with the first time. One description for the image build (which writes it into boot
// slot A, or into the initramfs of an image that has no slots), the upgrade bundle (whose parts it may add) and the
// machine (which declares the extensions from the slot it booted). The files sit flat beside the slot's kernel:
//   appliance.json                  the index: the appliance's name and version, each extension's name and sha256,
//                                   the kernel modules it loads at every boot
//   config.yaml                     the first boot's machine config (when the appliance declares one)
//   extension-NAME.squashfs         each extension's image
// An image with no slots (ISO, PXE) carries the same files in its initramfs, under INITRAMFS_PAYLOAD_DIR.
import { DEVICE_PATH_RE, EXTENSION_NAME_RE } from '../model/extension-manifest.ts';

export const PAYLOAD_INDEX = 'appliance.json';
export const PAYLOAD_CONFIG = 'config.yaml';
/** Where an image without boot slots carries its payload, in its initramfs (and so in the machine's root). */
export const INITRAMFS_PAYLOAD_DIR = '/appliance';
export const extensionFile = (name: string) => `extension-${name}.squashfs`;
const EXTENSION_FILE_RE = /^extension-([a-z][a-z0-9-]{0,62})\.squashfs$/;
const SHA256_RE = /^[0-9a-f]{64}$/;

export interface PayloadExtension {
  name: string; sha256: string; bytes: number;
  /** The devices its manifest asks for: granted by the appliance's definition, whose author is its admin. */
  devices?: string[];
}

export interface SlotPayload {
  /** The appliance's name and version (the definition's). */
  name: string;
  version: string;
  extensions: PayloadExtension[];
  /** The slot carries PAYLOAD_CONFIG. */
  config: boolean;
  /** Kernel modules of the system's own build loaded at every boot of this slot (appliance.yaml kernel.modules). */
  modules?: string[];
}

/** A kernel module's name, as KernelModuleSpec takes it. */
export const MODULE_NAME_RE = /^[A-Za-z0-9_-]{1,56}$/;

/** Whether a file of this name belongs to a slot's payload (an upgrade bundle's part, a slot's file). */
export const isPayloadFile = (name: string) => name === PAYLOAD_INDEX || name === PAYLOAD_CONFIG
  || EXTENSION_FILE_RE.test(name);

/** Every file the payload has, the index first. */
export const payloadFiles = (p: SlotPayload): string[] =>
  [PAYLOAD_INDEX, ...(p.config ? [PAYLOAD_CONFIG] : []), ...p.extensions.map((e) => extensionFile(e.name))];

export const encodePayload = (p: SlotPayload): Buffer => Buffer.from(`${JSON.stringify(p, null, 2)}\n`);

/** The index in `bytes`, or an Error naming `where` and what is wrong with it. */
export function decodePayload(bytes: Uint8Array, where: string): SlotPayload | Error {
  let v: Partial<SlotPayload>;
  try {
    v = JSON.parse(Buffer.from(bytes).toString('utf8')) as Partial<SlotPayload>;
  } catch (e) {
    return new Error(`${where}: not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (typeof v !== 'object' || v === null || typeof v.name !== 'string' || typeof v.version !== 'string'
    || typeof v.config !== 'boolean' || !Array.isArray(v.extensions)) {
    return new Error(`${where}: want {name, version, extensions: [...], config: true|false}`);
  }
  const seen = new Set<string>();
  for (const [i, e] of v.extensions.entries()) {
    const ok = typeof e === 'object' && e !== null && typeof e.name === 'string' && EXTENSION_NAME_RE.test(e.name)
      && typeof e.sha256 === 'string' && SHA256_RE.test(e.sha256) && Number.isSafeInteger(e.bytes) && e.bytes >= 0;
    if (!ok) return new Error(`${where}: extensions[${i}]: want {name, sha256 (64 hex digits), bytes}`);
    if (e.devices !== undefined && !(Array.isArray(e.devices) && e.devices.every((d) => typeof d === 'string'
      && DEVICE_PATH_RE.test(d)))) {
      return new Error(`${where}: extensions[${i}]: devices: want a list of paths under /dev`);
    }
    if (seen.has(e.name)) return new Error(`${where}: extensions[${i}]: "${e.name}" is named twice`);
    seen.add(e.name);
  }
  if (v.modules !== undefined && !(Array.isArray(v.modules) && v.modules.every((m) => typeof m === 'string'
    && MODULE_NAME_RE.test(m)))) {
    return new Error(`${where}: modules: want a list of module names (letters, digits, _ and -)`);
  }
  return { name: v.name, version: v.version, extensions: v.extensions, config: v.config,
    ...(v.modules?.length ? { modules: v.modules } : {}) };
}
