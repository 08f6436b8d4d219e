// image-extensions: the extensions the booted system carries (its payload, machinery/disk/slot-payload.ts: in the
// boot slot it came from, or in its initramfs) declared as the machine starts, before any config: each an
// ExtensionSpec (config namespace) of the engine's own, whose source is the file beside the kernel, so it starts
// with no network and no server, and an upgrade or a rollback brings the programs of the slot it boots. Their
// types are registered first, so that a config naming them is valid from the first boot. The kernel modules it
// loads are KernelModuleSpecs of the default layer, declared the same way. Not the users' config: never persisted,
// pruned or replaced by a config; the system that carries them decides them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import { upsert } from '../../../cosi/state/upsert.ts';
import {
  decodePayload, extensionFile, PAYLOAD_CONFIG, PAYLOAD_INDEX, type SlotPayload,
} from '../../../machinery/disk/slot-payload.ts';
import type { Logger } from '../../../machinery/log.ts';
import type { DefinitionInput } from '../../../cosi/meta/definition.ts';
import type { ExtensionSpec } from '../../../machinery/model/runtime-types.ts';
import {
  CONFIG_NS, EXTENSION_TYPE, KERNEL_MODULE_SPEC_TYPE, SYSTEM_NS,
} from '../../../proto/gen/resource-types.ts';
import type { KernelModuleSpecSpec } from '../../../proto/gen/spec-types.ts';

export interface ImagePayloadOptions {
  state: MemoryState;
  log: Logger;
  /** Where the booted system's payload is, and how to name it in messages ("slot B", "the initramfs"). */
  dir: string;
  from: string;
  owner: string;
  /** The types an extension defines, read from its image's manifest (ExtensionTypeBook.learn). */
  learn(name: string, spec: ExtensionSpec): Promise<DefinitionInput[] | Error>;
  register(name: string, types: readonly DefinitionInput[]): Promise<void>;
}

export interface ImagePayload {
  index: SlotPayload;
  /** The first boot's machine config, when the system carries one. */
  config?: { bytes: Buffer; name: string };
}

/**
 * Declares the payload's extensions; the payload, or undefined when the system carries none. A payload that cannot
 * be read is logged and left (the machine still serves its API, and says why); so is an extension whose types cannot
 * be read (its ExtensionStatus then says why it does not run).
 */
export async function declareImageExtensions(o: ImagePayloadOptions): Promise<ImagePayload | undefined> {
  const indexFile = join(o.dir, PAYLOAD_INDEX);
  if (!existsSync(indexFile)) return undefined;
  const index = decodePayload(readFileSync(indexFile), indexFile);
  if (index instanceof Error) {
    o.log.error(`the appliance's payload in ${o.from}: ${index.message}; its extensions and config are not used`);
    return undefined;
  }
  for (const e of index.extensions) {
    // Its devices granted by the appliance's definition: its author is the machine's admin.
    const spec: ExtensionSpec = { source: join(o.dir, extensionFile(e.name)), sha256: e.sha256, insecure: false, ca: '',
      ...(e.devices?.length ? { devices: e.devices } : {}) };
    const types = await o.learn(e.name, spec);
    if (types instanceof Error) o.log.error(`extension ${e.name} (${o.from}): its types: ${types.message}`);
    else if (types.length) await o.register(e.name, types);
    await upsert(o.state, { namespace: CONFIG_NS, type: EXTENSION_TYPE, id: e.name }, spec, o.owner);
  }
  // The modules the image loads: specs of the default layer (a config's spec of the same module wins the merge).
  for (const module of index.modules ?? []) {
    const spec: KernelModuleSpecSpec = { layer: 'default', module };
    await upsert(o.state, { namespace: SYSTEM_NS, type: KERNEL_MODULE_SPEC_TYPE, id: `image-${module}` }, spec,
      o.owner);
  }
  o.log.info(`${index.name} ${index.version} from ${o.from}: ${index.extensions.length} extension(s) declared`
    + `${index.extensions.length ? ` (${index.extensions.map((e) => e.name).join(', ')})` : ''}`
    + `${index.modules?.length ? `; kernel modules ${index.modules.join(', ')}` : ''}`
    + `${index.config ? '; a first-boot config' : ''}`);
  const configFile = join(o.dir, PAYLOAD_CONFIG);
  if (!index.config) return { index };
  if (!existsSync(configFile)) {
    o.log.error(`the appliance's payload in ${o.from}: its index names ${PAYLOAD_CONFIG}, which is not there`);
    return { index };
  }
  return { index, config: { bytes: readFileSync(configFile), name: `${o.from}: ${PAYLOAD_CONFIG}` } };
}
