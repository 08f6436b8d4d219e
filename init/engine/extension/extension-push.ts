// extension-push: the machine's side of `appliance push` (ExtensionService/Push): an extension's image received in
// chunks into `.<sha256>.push.partial` beside the kept images, each chunk where the last one ended (a push cut off
// resumes where the machine says it stands; one that comes ahead of the others waits for them, so a client may keep
// a few in flight), hashed as it comes and checked against its sha256 once whole, then kept as <sha256>.squashfs
// and declared as the ExtensionOverride of the extension's name, which the extension controller runs instead of the
// declared image. The first chunk is refused, and nothing kept, for an extension the machine does not declare, an
// image larger than an extension may be, or a signature it needs and does not verify (an ExtensionPolicy with
// requireSignature; a signature given is checked always). Overrides pushed with `persist` are written down
// (persistedOverrides) and declared again at the next boot; the others go with it.
import { createHash, verify, type Hash, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, fsyncSync, readFileSync, renameSync, rmSync,
  statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StateError } from '../../../cosi/state/errors.ts';
import type { MemoryState } from '../../../cosi/state/memory-state.ts';
import { upsert } from '../../../cosi/state/upsert.ts';
import type { Logger } from '../../../machinery/log.ts';
import { keyIdOf } from '../../../machinery/disk/upgrade-bundle.ts';
import { EXTENSION_NAME_RE } from '../../../machinery/model/extension-manifest.ts';
import { pushSigningText } from '../../../machinery/model/push-signature.ts';
import type { ExtensionOverrideSpec, ExtensionPolicySpec } from '../../../machinery/model/runtime-types.ts';
import { writeFileAtomic } from '../../../machinery/sys/atomic-write.ts';
import {
  CONFIG_NS, EXTENSION_OVERRIDE_TYPE, EXTENSION_POLICY_TYPE, EXTENSION_TYPE,
} from '../../../proto/gen/resource-types.ts';
import { imagePath, MAX_EXTENSION_BYTES, rememberChecked, SHA256_RE } from './fetch.ts';

export interface PushChunk {
  extension: string; sha256: string; size: number; offset: number; data: Buffer; persist: boolean;
  signature: Buffer;
}

export interface ExtensionPushesOptions {
  state: MemoryState;
  log: Logger;
  /** Where images are kept; a string when the machine runs no extensions (why). */
  imagesDir: string | { refuse: string };
  /** The keys the machine trusts for upgrades (trust.ts): the appliance's signing key, an UpgradePolicy's. */
  trustedKeys(): Promise<KeyObject[]>;
  now?: () => Date;
}

interface Receiving {
  sha256: string; size: number; file: string; received: number; persist: boolean; signedBy: string;
  /** The sha256 of what was received so far. */
  hash: Hash;
  /** Chunks that came before the ones ahead of them, waiting. */
  waiting: (() => void)[];
}

/** How far ahead of what the machine holds a chunk may come and wait for the rest: a few chunks in flight. */
const MAX_AHEAD = 8 << 20;
const AHEAD_WAIT_MS = 30_000;

const refuse = (message: string, id: string) => new StateError('failed-precondition', message, id);

export class ExtensionPushes {
  /** The push under way for each extension. */
  private readonly receiving = new Map<string, Receiving>();

  constructor(private readonly o: ExtensionPushesOptions) {}

  async push(c: PushChunk): Promise<{ received: number; complete: boolean }> {
    const dir = this.o.imagesDir;
    if (typeof dir !== 'string') throw refuse(dir.refuse, c.extension);
    let r = this.receiving.get(c.extension);
    if (!r || r.sha256 !== c.sha256 || r.size !== c.size) {
      if (c.offset !== 0) {
        throw refuse(`offset ${c.offset}: the machine holds no push of ${c.sha256} for extension ${c.extension}; `
          + 'send from 0', c.extension);
      }
      if (r) this.drop(c.extension, r);
      r = await this.begin(c, dir);
      this.receiving.set(c.extension, r);
    }
    // A chunk sent while the ones before it are still on their way waits for them (a client keeps a few in flight).
    if (c.offset > r.received && c.offset - r.received <= MAX_AHEAD) await arrived(r, c.offset);
    if (c.offset !== r.received) {
      throw refuse(`offset ${c.offset}: the machine holds ${r.received} bytes of extension ${c.extension}'s image; `
        + 'send from there', c.extension);
    }
    if (r.received + c.data.length > r.size) {
      this.drop(c.extension, r);
      throw refuse(`more than the ${r.size} bytes said`, c.extension);
    }
    // Appended and hashed at once (no await between): chunks are taken whole and in order.
    const fd = openSync(r.file, 'a', 0o600);
    try {
      writeSync(fd, c.data);
      if (r.received + c.data.length === r.size) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    r.hash.update(c.data);
    r.received += c.data.length;
    for (const w of r.waiting.splice(0)) w();
    if (r.received < r.size) return { received: r.received, complete: false };
    this.receiving.delete(c.extension);
    const got = r.hash.digest('hex');
    if (got !== r.sha256) {
      rmSync(r.file, { force: true });
      throw refuse(`its bytes are sha256 ${got}, not the ${r.sha256} said: nothing kept`, c.extension);
    }
    renameSync(r.file, imagePath(dir, r.sha256));
    rememberChecked(imagePath(dir, r.sha256), r.sha256);
    const override: ExtensionOverrideSpec = {
      sha256: r.sha256, bytes: r.size, pushedAt: (this.o.now?.() ?? new Date()).toISOString(), persist: r.persist,
      signedBy: r.signedBy,
    };
    await upsert(this.o.state, { namespace: CONFIG_NS, type: EXTENSION_OVERRIDE_TYPE, id: c.extension }, override, '');
    this.o.log.info(`extension ${c.extension}: pushed ${r.sha256.slice(0, 12)} (${r.size} bytes`
      + `${r.signedBy ? `, signed by ${r.signedBy}` : ''}${r.persist ? ', kept across boots' : ''})`);
    return { received: r.received, complete: true };
  }

  /** The checks of a push's first chunk; its partial file, empty. */
  private async begin(c: PushChunk, dir: string): Promise<Receiving> {
    const name = c.extension;
    if (!EXTENSION_NAME_RE.test(name)) throw new StateError('invalid-argument', `extension "${name}": no name`, name);
    if (!SHA256_RE.test(c.sha256)) {
      throw new StateError('invalid-argument', `sha256 "${c.sha256}": want 64 lowercase hex digits`, name);
    }
    if (!(c.size > 0 && c.size <= MAX_EXTENSION_BYTES)) {
      throw refuse(`size ${c.size}: an extension's image is 1 to ${MAX_EXTENSION_BYTES} bytes`, name);
    }
    const declared = this.o.state.listSync({ namespace: CONFIG_NS, type: EXTENSION_TYPE }).map((x) => x.metadata.id);
    if (!declared.includes(name)) {
      throw refuse(`extension ${name} is not declared on this machine (its config declares `
        + `${declared.length ? declared.join(', ') : 'none'}): push replaces a declared extension's image`, name);
    }
    const required = this.o.state.listSync({ namespace: CONFIG_NS, type: EXTENSION_POLICY_TYPE })
      .some((p) => (p.spec as ExtensionPolicySpec).requireSignature);
    let signedBy = '';
    if (c.signature.length || required) {
      if (!c.signature.length) {
        throw refuse(`an ExtensionPolicy requires pushed images to be signed (appliance push signs them with the `
          + 'appliance\'s signing key): this one is not', name);
      }
      const text = Buffer.from(pushSigningText(name, c.sha256));
      const key = (await this.o.trustedKeys()).find((k) => verify(null, text, k, c.signature));
      if (!key) {
        throw refuse('its signature verifies with no key this machine trusts for upgrades (the appliance\'s '
          + 'signing key, an UpgradePolicy\'s trustedKeys)', name);
      }
      signedBy = keyIdOf(key);
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `.${c.sha256}.push.partial`);
    rmSync(file, { force: true });
    return { sha256: c.sha256, size: c.size, file, received: 0, persist: c.persist, signedBy,
      hash: createHash('sha256'), waiting: [] };
  }

  private drop(name: string, r: Receiving): void {
    rmSync(r.file, { force: true });
    this.receiving.delete(name);
    for (const w of r.waiting.splice(0)) w();
  }
}

/** Until `r` holds `offset` bytes, or AHEAD_WAIT_MS pass (then the caller says where it stands). */
function arrived(r: Receiving, offset: number): Promise<void> {
  return new Promise((resolve) => {
    const deadline = setTimeout(resolve, AHEAD_WAIT_MS);
    const check = () => {
      if (r.received >= offset) {
        clearTimeout(deadline);
        resolve();
      } else r.waiting.push(check);
    };
    check();
  });
}

/** The overrides pushed with `persist`, as written down: declared again at boot when their image is still kept. */
export function readPersistedOverrides(
  file: string, imagesDir: string, log: Logger,
): Map<string, ExtensionOverrideSpec> {
  const out = new Map<string, ExtensionOverrideSpec>();
  if (!existsSync(file)) return out;
  let doc: { overrides?: Record<string, ExtensionOverrideSpec> };
  try {
    doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
  } catch (e) {
    log.warn(`${file}: not JSON (${(e as Error).message}): pushed extensions are not restored`);
    return out;
  }
  for (const [name, o] of Object.entries(doc.overrides ?? {})) {
    if (!SHA256_RE.test(o?.sha256 ?? '') || !existsSync(imagePath(imagesDir, o.sha256))) {
      log.warn(`extension ${name}: its pushed image ${o?.sha256} is gone: it runs its declared image`);
      continue;
    }
    out.set(name, o);
  }
  return out;
}

/** Writes down the overrides to restore at boot (those pushed with `persist`); nothing is written when unchanged. */
export function writePersistedOverrides(file: string, overrides: ReadonlyMap<string, ExtensionOverrideSpec>): void {
  const kept = Object.fromEntries([...overrides].filter(([, o]) => o.persist).sort(([a], [b]) => a.localeCompare(b)));
  const text = `${JSON.stringify({ overrides: kept }, null, 2)}\n`;
  if (existsSync(file) && statSync(file).isFile() && readFileSync(file, 'utf8') === text) return;
  if (!existsSync(file) && !Object.keys(kept).length) return;
  writeFileAtomic(file, text);
}
