// gce: what `gcloud compute images create --source-uri` imports: a gzip'd GNU tar whose one
// member is disk.raw (sparse), the disk a whole number of GiB. Timestamps, owners and the
// gzip header are fixed, so the same disk gives the same archive.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { OutputFormat } from './format.ts';

const GiB = 1 << 30;

export const gce: OutputFormat = {
  name: 'gce',
  summary: 'Google Compute Engine image: disk.raw in a gzip\'d tar, a whole number of GiB',
  build(ctx) {
    const dir = join(ctx.workDir, 'gce');
    mkdirSync(dir, { recursive: true });
    const disk = join(dir, 'disk.raw');
    const raw = ctx.raw();
    execFileSync('cp', ['--sparse=always', raw.file, disk]);
    truncateSync(disk, Math.ceil(raw.sizeBytes / GiB) * GiB);
    const tar = join(dir, 'image.tar');
    execFileSync('tar', ['--format=oldgnu', '-S', '--owner=0', '--group=0', '--numeric-owner',
      `--mtime=@${ctx.epoch}`, '-C', dir, '-cf', tar, 'disk.raw']);
    const out = join(ctx.outDir, 'appliance-gce.tar.gz');
    writeFileSync(out, gzipSync(readFileSync(tar), { level: 9 })); // node's gzip header: no name, mtime 0
    return [out];
  },
};
