// saved-config: the machine config as it is persisted on the STATE filesystem. One
// file, so that the config and what it was saved with (its source, the platform's
// instance id) change together: a first comment line holds the latter as JSON, the
// rest is the multi-document YAML itself. The header also holds the YAML's length and sha256: a file cut short
// (a damaged disk, a copy that stopped) can end on a line that is valid YAML, and must not load as a smaller config.
import type { DefinitionInput } from '../../cosi/meta/definition.ts';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../../native/errno.ts';
import { writeFileAtomicAsync } from '../sys/atomic-write.ts';
import { testPause } from '../sys/test-pause.ts';

export interface SavedConfig {
  /** Multi-document YAML of resources. */
  text: string;
  /** Where the config came from (api, fw_cfg, nocloud, ...). */
  source: string;
  /** The platform's instance id when it was saved: a persisted config belongs to one instance. */
  instanceId?: string;
  /** RFC 3339. */
  savedAt: string;
  /**
   * The types of the extensions the config declares, by image sha256: the next boot knows them before any
   * network is up (validation needs them; fetching the images waits for the network).
   */
  extensionTypes?: Record<string, DefinitionInput[]>;
  /** When loaded: a save that was under way when the machine stopped (its temporary file was left), in words. */
  interrupted?: string;
}

const HEADER = '# appliance machine config ';

export function formatSavedConfig(c: SavedConfig): string {
  const meta = {
    source: c.source, savedAt: c.savedAt, ...(c.instanceId ? { instanceId: c.instanceId } : {}),
    ...(c.extensionTypes && Object.keys(c.extensionTypes).length ? { extensionTypes: c.extensionTypes } : {}),
    bytes: Buffer.byteLength(c.text), sha256: sha256(c.text),
  };
  return `${HEADER}${JSON.stringify(meta)}\n${c.text}`;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function parseSavedConfig(text: string, where: string): SavedConfig {
  const nl = text.indexOf('\n');
  const first = nl < 0 ? text : text.slice(0, nl);
  if (!first.startsWith(HEADER)) throw new Error(`${where}: not a saved machine config (no "${HEADER.trim()}" line)`);
  let meta: Partial<SavedConfig>;
  try {
    meta = JSON.parse(first.slice(HEADER.length)) as Partial<SavedConfig>;
  } catch (e) {
    throw new Error(`${where}: damaged header line: ${(e as Error).message}`, { cause: e });
  }
  if (typeof meta.source !== 'string' || typeof meta.savedAt !== 'string') {
    throw new Error(`${where}: damaged header line: source and savedAt are required`);
  }
  const yaml = nl < 0 ? '' : text.slice(nl + 1);
  const check = meta as { bytes?: unknown; sha256?: unknown };
  // Files saved before the header held these load as they are.
  if (typeof check.bytes === 'number' && Buffer.byteLength(yaml) !== check.bytes) {
    throw new Error(`${where}: damaged: it holds ${Buffer.byteLength(yaml)} bytes of the ${check.bytes} saved at `
      + `${meta.savedAt} (cut short? the config is not loaded, lest part of it be taken for the whole)`);
  }
  if (typeof check.sha256 === 'string' && sha256(yaml) !== check.sha256) {
    throw new Error(`${where}: damaged: its content does not match the sha256 saved with it at ${meta.savedAt}`);
  }
  return {
    text: yaml, source: meta.source, savedAt: meta.savedAt,
    ...(typeof meta.instanceId === 'string' ? { instanceId: meta.instanceId } : {}),
    ...(typeof meta.extensionTypes === 'object' && meta.extensionTypes !== null
      ? { extensionTypes: meta.extensionTypes } : {}),
  };
}

/** Where the machine config is kept across boots, or why it cannot be. */
export interface ConfigStore {
  /** The file, or undefined when the config is held in memory only. */
  readonly path: string | undefined;
  /** Why there is no file (no STATE filesystem). */
  readonly why: string;
  load(): SavedConfig | undefined;
  /** Through the thread pool: PID 1 serves the API while the disk syncs. */
  save(c: SavedConfig): Promise<void>;
}

export const CONFIG_FILE = 'machine-config.yaml';
/** Where a saved config that cannot be read is moved (the last one only). */
export const DAMAGED_SUFFIX = '.damaged';
/**
 * Largest saved config read back. Writes through the API make the config grow past an input's 1 MiB (10,000 small
 * resources are about 2 MiB); it must still load at the next boot.
 */
export const MAX_SAVED_CONFIG_BYTES = 64 << 20;

export function fileConfigStore(dir: string): ConfigStore {
  const path = join(dir, CONFIG_FILE);
  return {
    path, why: '',
    load() {
      let text: string;
      const interrupted = interruptedSave(dir);
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        if (isErrno(e, 'ENOENT')) return undefined;
        throw e;
      }
      try {
        return { ...parseSavedConfig(text, path), ...(interrupted ? { interrupted } : {}) };
      } catch (e) {
        // Kept aside, not overwritten by the next save (a config given another way): what is left of it is evidence.
        renameSync(path, `${path}${DAMAGED_SUFFIX}`);
        throw new Error(`${(e as Error).message}; kept as ${CONFIG_FILE}${DAMAGED_SUFFIX}`, { cause: e });
      }
    },
    save: (c) => writeFileAtomicAsync(path, formatSavedConfig(c), 0o600, () => testPause('config-save')),
  };
}

/**
 * A save the machine stopped in (a power cut between writing the temporary file and renaming it): the file itself
 * is whole, old or new; the temporary one is removed, and what happened is said.
 */
function interruptedSave(dir: string): string | undefined {
  const left = readdirSync(dir).filter((f) => f.startsWith(`.${CONFIG_FILE}.`) && f.endsWith('.tmp'));
  for (const f of left) rmSync(join(dir, f), { force: true });
  return left.length ? `a save was under way when the machine stopped (${left.join(', ')} left, now removed)`
    : undefined;
}

/** No STATE: nothing survives a reboot (the resources in the state are the config meanwhile). */
export function memoryConfigStore(why: string): ConfigStore {
  return { path: undefined, why, load: () => undefined, save: () => Promise.resolve() };
}
