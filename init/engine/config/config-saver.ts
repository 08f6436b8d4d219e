// config-saver: the machine config kept on disk. Writes the config's resources as the saved
// config (its text, with the types of its extensions), now or once a burst of writes is over,
// and at shutdown waits, bounded, for the last save. It knows nothing of plans or tries: the
// machine config says when to save and what the status says about it.
import type { Resource } from '../../../cosi/resource/resource.ts';
import { yamlText } from '../../../cosi/spec/yaml-text.ts';
import type { ConfigStore, SavedConfig } from '../../../machinery/config/saved-config.ts';
import type { Logger } from '../../../machinery/log.ts';
import type { ExtensionSpec } from '../../../machinery/model/runtime-types.ts';
import { EXTENSION_TYPE } from '../../../proto/gen/resource-types.ts';
import type { ExtensionTypeBook } from '../extension/types.ts';

/** Writes through the State API come in bursts: one save after each burst (a save of 10,000 resources costs ~70 ms). */
const PERSIST_DELAY_MS = 500;
/** How long stopping waits for the config's last save. */
const STOP_SAVE_MS = 10_000;

/** Where the config was persisted, or why it was not. */
export interface Saved { persistedTo: string; persistProblem: string }

export interface ConfigSaverOptions {
  store: ConfigStore;
  log: Logger;
  now: () => Date;
  /** The machine config's resources now, in creation order. */
  resources: () => Resource[];
  /** The types of the config's extensions, saved with it so that a boot validates it without their images. */
  book?: ExtensionTypeBook;
}

/** The machine config as text: what is persisted, and what `cosictl get machineconfig`-style readers see. */
export function configText(resources: readonly Resource[]): string {
  return resources.map((r) => {
    const m = r.metadata;
    const metadata = {
      namespace: m.namespace, type: m.type, id: m.id,
      ...(Object.keys(m.labels).length ? { labels: m.labels } : {}),
      ...(Object.keys(m.annotations).length ? { annotations: m.annotations } : {}),
    };
    return `---\n${yamlText({ metadata, spec: r.spec })}`;
  }).join('');
}

/** Where a persist left the config, in words. */
export const whereSaved = (s: Saved) =>
  (s.persistedTo ? `persisted to ${s.persistedTo}` : `held in memory only: ${s.persistProblem}`);

export class ConfigSaver {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: ConfigSaverOptions) {}

  /** Whether a save waits for the end of a burst of writes. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /** Calls `save` once the burst of writes this one belongs to is over (the burst's first write starts the wait). */
  afterBurst(save: () => void): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      save();
    }, PERSIST_DELAY_MS);
  }

  /** Drops the save that waits for its burst; whether there was one. */
  cancel(): boolean {
    const waiting = this.waiting;
    clearTimeout(this.timer);
    this.timer = undefined;
    return waiting;
  }

  /** Writes the machine config to the store now (a save waiting for its burst is this one); where, or why not. */
  async save(source: string, instanceId?: string): Promise<Saved> {
    this.cancel();
    const { path, why } = this.o.store;
    // In memory the resources are the config already: no text to make.
    if (!path) return { persistedTo: '', persistProblem: why };
    try {
      await this.o.store.save(this.saved(source, instanceId));
    } catch (e) {
      this.o.log.error(`the machine config is held in memory only: ${(e as Error).message}`);
      return { persistedTo: '', persistProblem: (e as Error).message };
    }
    return { persistedTo: path, persistProblem: '' };
  }

  /** The config as it would be persisted now, for another disk's STATE (the installer's), and its size. */
  forDisk(source: string, instanceId?: string): { saved: SavedConfig; resources: number } {
    const resources = this.o.resources();
    return { saved: this.saved(source, instanceId, resources), resources: resources.length };
  }

  /** The config as the store keeps it, as of now. */
  private saved(source: string, instanceId?: string, resources = this.o.resources()): SavedConfig {
    const book = this.o.book;
    const extensionTypes = Object.fromEntries(book ? resources
      .filter((r) => r.metadata.type === EXTENSION_TYPE)
      .flatMap((r) => {
        const sha = (r.spec as ExtensionSpec).sha256;
        const types = book.known(sha);
        return types ? [[sha, types] as const] : [];
      }) : []);
    return {
      text: configText(resources), source, savedAt: this.o.now().toISOString(), ...(instanceId ? { instanceId } : {}),
      ...(Object.keys(extensionTypes).length ? { extensionTypes } : {}),
    };
  }

  /**
   * At shutdown: waits for `saving`, the config's last save (its fsyncs run on the thread pool), so that STATE
   * is unmounted with the config on it. Bounded: an apply still waiting for extension images must not hold the
   * reboot. A failed or late save is logged.
   */
  async finish(saving: Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), STOP_SAVE_MS);
    });
    const saved = saving.then(() => 'saved' as const, (e: unknown) => {
      this.o.log.error(`the machine config's last save failed: ${(e as Error).message}`);
      return 'failed' as const;
    });
    const how = await Promise.race([saved, late]).finally(() => clearTimeout(timer));
    if (how === 'late') this.o.log.warn(`the machine config was still being saved after ${STOP_SAVE_MS} ms: stopping`);
  }
}
