// file-spec: MergedFileSpec (id = path) -> the file written (atomically, with its mode)
// -> FileSpecStatus. A file that was there before the first write is kept in the status
// (up to 64 KiB) and put back when the spec goes; one that was not is removed. Only /run,
// /var and /tmp: the spec's rule refuses any other path, and this file checks again.
import { lazyCrypto } from '../../../machinery/sys/lazy-builtins.ts';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { errnoOf } from '../../../native/errno.ts';
import { writeFileAtomic } from '../../../machinery/sys/atomic-write.ts';
import { layerOf } from '../../../machinery/model/layers.ts';
import { specController } from '../../../cosi/controller/spec-controller.ts';
import { type FileSpecSpec, type FileSpecStatusSpec } from '../types.ts';
import { FILE_SPEC_STATUS_TYPE, MERGED_FILE_SPEC_TYPE, SYSTEM_NS } from '../../../proto/gen/resource-types.ts';

/** The most of a file that was there before that is kept to be put back. */
const MAX_ORIGINAL_BYTES = 64 << 10;
const ALLOWED = /^\/(run|var|tmp)\/./;

/** The file's place under `root` ("/" on the machine), refusing anything outside /run, /var, /tmp. */
export function filePath(path: string, root: string): string {
  if (normalize(path) !== path || !ALLOWED.test(path) || path.endsWith('/')) {
    throw new Error(`"${path}" is not a file under /run, /var or /tmp`);
  }
  return join(root, path);
}

const bytesOf = (s: FileSpecSpec) => (s.encoding === 'base64' ? Buffer.from(s.content, 'base64')
  : Buffer.from(s.content, 'utf8'));
const modeOf = (s: FileSpecSpec) => (s.mode ? parseInt(s.mode, 8) : 0o644);

export function fileSpecController(root = '/') {
  const keep = (prev: FileSpecStatusSpec | undefined) => ({
    ...(prev?.original !== undefined ? { original: prev.original } : {}),
    ...(prev?.originalMode !== undefined ? { originalMode: prev.originalMode } : {}),
  });
  return specController<FileSpecSpec, FileSpecStatusSpec, null>({
    name: 'file-spec', namespace: SYSTEM_NS, specType: MERGED_FILE_SPEC_TYPE, statusType: FILE_SPEC_STATUS_TYPE,
    observe: () => null,
    apply(path, s, prev) {
      const file = filePath(path, root);
      const data = bytesOf(s);
      let before = keep(prev);
      if (!prev) {
        // The first write: what was there is kept, to be put back.
        const st = lstatSync(file, { throwIfNoEntry: false });
        if (st && !st.isFile()) throw new Error(`${path} exists and is not a regular file`);
        if (st && st.size > MAX_ORIGINAL_BYTES) {
          throw new Error(`${path} exists and is larger than ${MAX_ORIGINAL_BYTES >> 10} KiB: not replaced`);
        }
        if (st) {
          before = { original: readFileSync(file).toString('base64'), originalMode: (st.mode & 0o777).toString(8) };
        }
      }
      mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
      writeFileAtomic(file, data, modeOf(s));
      chmodSync(file, modeOf(s));
      return {
        state: 'applied', path, sha256: lazyCrypto().createHash('sha256').update(data).digest('hex'), size: data.length,
        layer: layerOf(s), ...before,
      };
    },
    failed: (path, s, prev, error) => ({
      state: 'error', path, sha256: '', size: 0, layer: layerOf(s), error, ...keep(prev),
    }),
    undo(path, prev) {
      const file = filePath(path, root);
      if (prev.original === undefined) {
        try {
          rmSync(file);
        } catch (e) {
          if (errnoOf(e) !== 'ENOENT') throw e;
        }
        return;
      }
      if (!existsSync(dirname(file))) mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
      const mode = prev.originalMode ? parseInt(prev.originalMode, 8) : 0o644;
      writeFileAtomic(file, Buffer.from(prev.original, 'base64'), mode);
      chmodSync(file, mode);
    },
  });
}
