// update-client: one machine's view of its update repository through tuf-js (TUF's client workflow: the root walked
// from the one trusted to the newest, then timestamp, snapshot and targets, each checked for signatures, thresholds,
// expiry, rollback and freeze; a target checked for its length and hashes). What tuf-js keeps between polls is in
// DIR/metadata; the root the policy pins is the anchor it starts from, and a policy naming another root starts
// afresh. What we add: mirrors tried in order, our fetcher (tuf-fetcher.ts), the channel and release read from the
// targets' custom metadata (machinery/update/release-meta.ts), and the trusted versions for UpdateStatus.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TargetFile, Updater } from 'tuf-js';
import { LengthOrHashMismatchError } from '@tufjs/models/dist/error.js';
import {
  channelTarget, parseChannelInfo, parseReleaseInfo, type ChannelInfo, type ReleaseInfo,
} from '../../machinery/update/release-meta.ts';
import { TufFetcher } from './tuf-fetcher.ts';

export interface TrustedVersions { root: number; targets: number; snapshot: number; timestamp: number }

export interface RepositoryView {
  url: string;
  versions: TrustedVersions;
  /** Absent: the repository has no such channel. */
  offered?: { channel: ChannelInfo; release?: ReleaseInfo; target?: TargetFile };
  metadataBytes: number;
}

/** A poll refused or failed: the cause is what the library or the network threw. */
export class UpdateCheckError extends Error {}

export interface UpdateClientOptions {
  /** Where the trusted metadata and downloads are kept (on /var). */
  dir: string;
  urls: readonly string[];
  channel: string;
  /** The root.json the policy pins. */
  root: string;
}

const base = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** The file's JSON, or undefined when it is missing or not JSON (cut short). */
function readsAsJson(file: string): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch {
    // A file tuf-js was writing when the power went: treated as absent, so it is fetched again.
    return undefined;
  }
}

export class UpdateClient {
  private readonly metadataDir: string;
  private readonly fetcher: TufFetcher;

  constructor(private readonly o: UpdateClientOptions) {
    this.metadataDir = join(o.dir, 'metadata');
    this.fetcher = new TufFetcher(join(o.dir, 'staging'));
    this.anchor();
  }

  /** The pinned root in place: kept while the policy pins the same root, else what was trusted is dropped. */
  private anchor(): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.o.root);
    } catch (e) {
      throw new UpdateCheckError(`the policy's root is not JSON: ${(e as Error).message}`, { cause: e });
    }
    if ((parsed as { signed?: { _type?: string } }).signed?._type !== 'root') {
      throw new UpdateCheckError('the policy\'s root is not a TUF root metadata file (signed._type is not "root")');
    }
    const hash = createHash('sha256').update(this.o.root).digest('hex');
    const anchorFile = join(this.o.dir, 'anchor.sha256');
    const known = existsSync(anchorFile) ? readFileSync(anchorFile, 'utf8').trim() : '';
    // tuf-js writes its files in place: one cut short by a power loss is not trusted, the pinned root is.
    if (known === hash && readsAsJson(join(this.metadataDir, 'root.json'))) return;
    rmSync(this.metadataDir, { recursive: true, force: true });
    mkdirSync(this.metadataDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(this.metadataDir, 'root.json'), this.o.root);
    writeFileSync(anchorFile, `${hash}\n`);
  }

  private async updater(url: string): Promise<Updater> {
    const { Updater } = await import('tuf-js');
    return new Updater({ metadataDir: this.metadataDir, metadataBaseUrl: `${base(url)}metadata`,
      targetBaseUrl: `${base(url)}targets`, fetcher: this.fetcher });
  }

  /** The versions tuf-js trusts now (what it persisted). */
  trustedVersions(): TrustedVersions {
    const version = (role: string) => {
      const f = join(this.metadataDir, `${role}.json`);
      const v = readsAsJson(f) as { signed?: { version?: number } } | undefined;
      return typeof v?.signed?.version === 'number' ? v.signed.version : 0;
    };
    return { root: version('root'), targets: version('targets'), snapshot: version('snapshot'),
      timestamp: version('timestamp') };
  }

  private last?: { url: string; updater: Updater };

  /** Polls the mirrors in order until one gives a verified view; throws the first mirror's refusal otherwise. */
  async check(): Promise<RepositoryView> {
    const errors: { url: string; e: unknown }[] = [];
    for (const url of this.o.urls) {
      this.fetcher.bytes = 0;
      try {
        const updater = await this.updater(url);
        await updater.refresh();
        const ch = await updater.getTargetInfo(channelTarget(this.o.channel));
        this.last = { url, updater };
        const view: RepositoryView = { url, versions: this.trustedVersions(), metadataBytes: this.fetcher.bytes };
        if (!ch) return view;
        const channel = parseChannelInfo(ch.custom, ch.path);
        if (channel instanceof Error) throw channel;
        if (!channel.release) return { ...view, offered: { channel } };
        const target = await updater.getTargetInfo(channel.release);
        if (!target) throw new Error(`${ch.path} offers ${channel.release}, which the targets do not list`);
        const release = parseReleaseInfo(target.custom, target.path);
        if (release instanceof Error) throw release;
        return { ...view, offered: { channel, release, target } };
      } catch (e) {
        errors.push({ url, e });
      }
    }
    // Each mirror's failure, named by its URL once (the HTTP client's messages start with the URL already).
    const said = (x: { url: string; e: unknown }) => {
      const m = (x.e as Error).message;
      return m.startsWith(base(x.url)) ? m : `${x.url}: ${m}`;
    };
    throw new UpdateCheckError(errors.map(said).join('; '), { cause: errors[0]!.e });
  }

  /**
   * The bytes of a target the last check verified, streamed: refused past its length, and the last chunk held back
   * until the whole length and every hash matched, so a consumer (the upgrader, which writes a slot once a bundle is
   * whole) never sees a complete target TUF would refuse. tuf-js's downloadTarget would keep a file and a copy of
   * it on /var first: at 256 MiB those extra copies paged the machine (measured in the fleet test).
   */
  async *stream(target: TargetFile): AsyncGenerator<Buffer> {
    if (!this.last) throw new UpdateCheckError('no verified view of the repository: check first');
    const hashes = Object.entries(target.hashes);
    const unknown = hashes.filter(([alg]) => !['sha256', 'sha512'].includes(alg)).map(([alg]) => alg);
    if (!hashes.length || unknown.length) {
      throw new UpdateCheckError(`${target.path}: hashes ${hashes.map(([a]) => a).join(', ') || 'none'}; this machine `
        + 'checks sha256 and sha512');
    }
    const root = JSON.parse(readFileSync(join(this.metadataDir, 'root.json'), 'utf8')) as {
      signed: { consistent_snapshot?: boolean } };
    // As tuf-js names it (Updater.downloadTarget): consistent snapshots put the first hash before the file's name.
    const slash = target.path.lastIndexOf('/');
    const name = root.signed.consistent_snapshot
      ? `${target.path.slice(0, slash + 1)}${hashes[0]![1]}.${target.path.slice(slash + 1)}` : target.path;
    const digests = hashes.map(([alg, want]) => ({ alg, want, hash: createHash(alg) }));
    let length = 0;
    let held: Buffer | undefined;
    const res = await this.fetcher.open(`${base(this.last.url)}targets/${name}`);
    for await (const chunk of res as AsyncIterable<Buffer>) {
      length += chunk.length;
      this.fetcher.bytes += chunk.length;
      if (length > target.length) {
        res.destroy();
        throw new LengthOrHashMismatchError(`${target.path}: more than its ${target.length} bytes`);
      }
      for (const d of digests) d.hash.update(chunk);
      if (held) yield held;
      held = chunk;
    }
    if (length !== target.length) {
      throw new LengthOrHashMismatchError(`${target.path}: ${length} bytes, the targets say ${target.length}`);
    }
    for (const d of digests) {
      const got = d.hash.digest('hex');
      if (got !== d.want) {
        throw new LengthOrHashMismatchError(`${target.path}: ${d.alg} ${got}, the targets say ${d.want}`);
      }
    }
    if (held) yield held;
  }

  /** Bytes fetched since the last check began (metadata, then a stream's). */
  get fetched(): number {
    return this.fetcher.bytes;
  }
}
