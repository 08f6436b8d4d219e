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
    if (known === hash && existsSync(join(this.metadataDir, 'root.json'))) return;
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
      if (!existsSync(f)) return 0;
      return (JSON.parse(readFileSync(f, 'utf8')) as { signed: { version: number } }).signed.version;
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
    const first = errors[0]!;
    const others = errors.slice(1).map((x) => `; ${x.url}: ${(x.e as Error).message}`).join('');
    throw new UpdateCheckError(`${first.url}: ${(first.e as Error).message}${others}`, { cause: first.e });
  }

  /** Downloads the target the last check verified to `file`, checking its length and hashes; the bytes fetched. */
  async download(target: TargetFile, file: string): Promise<number> {
    if (!this.last) throw new UpdateCheckError('no verified view of the repository: check first');
    this.fetcher.bytes = 0;
    await this.last.updater.downloadTarget(target, file);
    return this.fetcher.bytes;
  }
}
