// extension-image: builds an extension's squashfs the way a third party would (docs/writing-plugins.md),
// for the example in plugins/examples/hello-python: a root filesystem holding the Python interpreter
// and the grpcio and protobuf packages, copied from this host's Debian packages (each package's file
// list, with every package it depends on that is installed), the message classes protoc makes from
// the COSI protos, the plugin's script, and its manifest at /manifest.yaml; then mksquashfs.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync, cpSync, createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync,
  readlinkSync, realpathSync, renameSync,
  rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packSquashfs } from '../image/appliance/extension-build.ts';
import { sha256 } from '../image/hash.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export const HELLO_EXTENSION_DIR = join(ROOT, 'plugins', 'examples', 'hello-python');
/** The Debian packages the example needs; their dependencies come along. */
const PACKAGES = ['python3', 'python3-grpcio', 'python3-protobuf'];
/** What a program never reads at run time. */
const LEFT_OUT = new RegExp('^/usr/share/(doc|man|info|locale|lintian|bug|zoneinfo|doc-base|menu)/'
  + '|^/usr/lib/python3[.0-9]*/(test|idlelib|tkinter|ensurepip|lib2to3|turtledemo)/');

export interface BuiltExtension { path: string; sha256: string; bytes: number; files: number }

/** The installed packages `roots` need, found through Depends and Pre-Depends (the first installed of alternatives). */
export function packageClosure(roots: readonly string[]): string[] {
  // dpkg-query exits 1 for a package it does not know: that answers "not installed" as well.
  const installed = (p: string) =>
    spawnSync('dpkg-query', ['-W', '-f', '${db:Status-Abbrev}', p], { encoding: 'utf8' }).stdout.startsWith('ii');
  const seen = new Set<string>();
  const todo = [...roots];
  while (todo.length) {
    const p = todo.pop()!;
    if (seen.has(p)) continue;
    if (!installed(p)) throw new Error(`package ${p} is not installed (scripts/install-host-deps.sh installs it)`);
    seen.add(p);
    const deps = execFileSync('dpkg-query', ['-W', '-f', '${Pre-Depends}, ${Depends}', p], { encoding: 'utf8' });
    for (const group of deps.split(',').map((s) => s.trim()).filter(Boolean)) {
      const names = group.split('|').map((a) => a.trim().split(/[\s(]/)[0]!.replace(/:any$/, ''));
      const pick = names.find((n) => seen.has(n) || installed(n));
      if (pick && !seen.has(pick)) todo.push(pick);
    }
  }
  return [...seen].sort();
}

/** Copies every file and symbolic link the packages installed into `root`, paths resolved through /lib -> usr/lib. */
export function copyPackageFiles(packages: readonly string[], root: string): number {
  // The host's merged-/usr links, as they are.
  for (const top of ['bin', 'lib', 'lib64', 'sbin']) {
    const p = `/${top}`;
    if (existsSync(p) && lstatSync(p).isSymbolicLink()) symlinkSync(readlinkSync(p), join(root, top));
  }
  let files = 0;
  const listed = execFileSync('dpkg-query', ['-L', ...packages], { encoding: 'utf8', maxBuffer: 64 << 20 });
  for (const path of new Set(listed.split('\n').filter((l) => l.startsWith('/')))) {
    if (LEFT_OUT.test(path) || !existsSync(path)) continue;
    const st = lstatSync(path);
    if (st.isDirectory()) continue;
    const real = join(realpathSync(dirname(path)), basename(path));
    if (LEFT_OUT.test(real)) continue;
    const to = join(root, real);
    if (lstatSync(to, { throwIfNoEntry: false })) continue;
    mkdirSync(dirname(to), { recursive: true });
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(path), to);
    else if (st.isFile()) {
      copyFileSync(path, to);
      files++;
    }
  }
  return files;
}

export const HELLO_MANIFEST = () => readFileSync(join(HELLO_EXTENSION_DIR, 'manifest.yaml'), 'utf8');

/**
 * Builds the hello extension's root once and one image of it per manifest (file name -> manifest text; the
 * example's own manifest is HELLO_MANIFEST()) into `outDir`; progress on stderr. With `keepRoot`, the root is
 * kept there without a manifest (for `dir:` in appliance.yaml, whose fields are the manifest).
 */
export function buildHelloImages(outDir: string, manifests: Record<string, string>, o: { keepRoot?: string } = {}):
  Record<string, BuiltExtension> {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'hello-rootfs-'));
  try {
    const packages = packageClosure(PACKAGES);
    process.stderr.write(`[extension] hello: ${packages.length} packages: ${packages.join(' ')}\n`);
    const files = copyPackageFiles(packages, root);
    // The loader finds the libraries through its cache, as on the host.
    execFileSync('ldconfig', ['-r', root]);
    // The launcher's mount points, and one for a volume (extension.test.ts's hello 1.1 keeps one).
    for (const d of ['proc', 'dev', 'tmp', 'run', 'var/lib/hello']) mkdirSync(join(root, d), { recursive: true });
    const app = join(root, 'opt', 'hello');
    mkdirSync(join(app, 'gen'), { recursive: true });
    cpSync(join(HELLO_EXTENSION_DIR, 'hello.py'), join(app, 'hello.py'));
    execFileSync('protoc', ['-I', join(ROOT, 'proto'), '-I', '/usr/include', `--python_out=${join(app, 'gen')}`,
      'v1alpha1/resource.proto', 'v1alpha1/state.proto']);
    mkdirSync(outDir, { recursive: true });
    const built: Record<string, BuiltExtension> = {};
    for (const [name, manifest] of Object.entries(manifests)) {
      writeFileSync(join(root, 'manifest.yaml'), manifest);
      built[name] = squashfs(root, join(outDir, `${name}.squashfs`), files);
    }
    const first = Object.values(built)[0];
    const mib = first ? ` of ${(first.bytes / 2 ** 20).toFixed(1)} MiB` : '';
    process.stderr.write(`[extension] hello: ${files} files, ${Object.keys(built).length} image(s)${mib} `
      + `in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    if (o.keepRoot) {
      rmSync(join(root, 'manifest.yaml'), { force: true });
      renameSync(root, o.keepRoot);
    }
    return built;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** An image of `root`, packed as `appliance build` packs one (image/appliance/extension-build.ts). */
export function squashfs(root: string, path: string, files: number): BuiltExtension {
  packSquashfs(root, path);
  const bytes = statSync(path).size;
  return { path, sha256: sha256(readFileSync(path)), bytes, files };
}

/** Where the guest finds images served by serveImages (slirp's guestfwd to the host's server). */
export const IMAGE_HOST = { guestAddr: '10.0.2.100', guestPort: 80 } as const;
export const imageUrl = (name: string) => `http://${IMAGE_HOST.guestAddr}/${name}.squashfs`;

/** A strict HTTP server on loopback: GET of an image in `dir` (NAME.squashfs) only, 404 for anything else. */
export async function serveImages(dir: string): Promise<{ port: number; close(): void }> {
  const server: Server = createServer((req, res) => {
    const name = /^\/([a-z0-9.-]+\.squashfs)$/.exec(req.url ?? '')?.[1];
    const size = name && req.method === 'GET' ? statSync(join(dir, name), { throwIfNoEntry: false })?.size : undefined;
    if (size === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': size, 'content-type': 'application/octet-stream' });
    createReadStream(join(dir, name!)).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, close: () => server.close() };
}
