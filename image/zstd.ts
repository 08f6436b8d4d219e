// zstd: the build's one way to compress with zstd (the Debian tool, installed by scripts/install-host-deps.sh):
// the initramfs streamed in, the disk form's image from its file. Multi-threaded output does not depend on the
// thread count, so the bytes are the same on any host.
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * Runs `zstd -<level>` writing `output`, from `input`: a file, or a function that writes to zstd's stdin; rejects
 * with zstd's own words.
 */
export function zstd(
  output: string, level: number, input: string | ((stdin: Writable) => Promise<void>),
): Promise<void> {
  return new Promise((resolve, reject) => {
    const file = typeof input === 'string';
    const args = [`-${level}`, '-T0', '-q', '-f', '--no-progress', '-o', output, ...(file ? [input] : [])];
    const z = spawn('zstd', args, { stdio: [file ? 'ignore' : 'pipe', 'inherit', 'pipe'] });
    let err = '';
    z.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    z.on('error', (e) => reject(new Error(`cannot run zstd (npm run setup installs it): ${e.message}`)));
    z.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`zstd -o ${output} exited ${code}: ${err}`))));
    if (typeof input === 'string') return;
    z.stdin!.on('error', reject);
    input(z.stdin!).then(() => z.stdin!.end(), reject);
  });
}
