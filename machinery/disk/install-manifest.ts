// install-manifest: what the install payload says of itself (install/install.json on the ISO and
// beside the PXE files): written by the image build, read by the machine that installs itself, so
// both sides share this one definition and its checks.

/** The folder the payload lives in, on the ISO and beside the PXE files. */
export const INSTALL_DIR = 'install';
export const INSTALL_MANIFEST = 'install.json';
export const INSTALL_DISK = 'appliance.raw.gz';
export const INSTALL_PAYLOAD_KIND = 'appliance-install/v1';
/** A manifest is a page of JSON; anything much larger is not one. */
export const MAX_INSTALL_MANIFEST_BYTES = 64 << 10;

export interface InstallManifest {
  kind: typeof INSTALL_PAYLOAD_KIND;
  /** The build the disk holds. */
  version: string;
  commit: string;
  /** The command line the installed disk boots with. */
  cmdline: string;
  disk: {
    file: string;
    compression: 'gzip';
    /** The disk as written: its size and sha256 once decompressed. */
    size: number;
    sha256: string;
    /** The file as shipped. */
    compressedSize: number;
    compressedSha256: string;
  };
  partitions: { name: string; type: string; guid: string; firstLba: number; lastLba: number }[];
}

const SHA256 = /^[0-9a-f]{64}$/;
const FILE = /^[A-Za-z0-9._-]+$/;

/** The manifest in `text`, or an Error naming `where` and each field that is wrong. */
export function parseInstallManifest(text: string, where: string): InstallManifest | Error {
  let m: Partial<InstallManifest>;
  try {
    m = JSON.parse(text) as Partial<InstallManifest>;
  } catch (e) {
    return new Error(`${where}: not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (typeof m !== 'object' || m === null) return new Error(`${where}: not a JSON object`);
  const problems: string[] = [];
  if (m.kind !== INSTALL_PAYLOAD_KIND) {
    problems.push(`kind is ${JSON.stringify(m.kind)}, want "${INSTALL_PAYLOAD_KIND}"`);
  }
  for (const k of ['version', 'commit', 'cmdline'] as const) {
    if (typeof m[k] !== 'string') problems.push(`${k} must be a string`);
  }
  const d = m.disk;
  if (typeof d !== 'object' || d === null) problems.push('disk is missing');
  else {
    if (typeof d.file !== 'string' || !FILE.test(d.file)) problems.push('disk.file must be a plain file name');
    if (d.compression !== 'gzip') problems.push(`disk.compression is ${JSON.stringify(d.compression)}, want "gzip"`);
    for (const k of ['size', 'compressedSize'] as const) {
      if (!Number.isSafeInteger(d[k]) || d[k] <= 0) problems.push(`disk.${k} must be a positive integer`);
    }
    if (Number.isSafeInteger(d.size) && d.size % 512 !== 0) problems.push('disk.size must be whole 512-byte sectors');
    for (const k of ['sha256', 'compressedSha256'] as const) {
      if (typeof d[k] !== 'string' || !SHA256.test(d[k])) problems.push(`disk.${k} must be 64 hex digits`);
    }
  }
  if (!Array.isArray(m.partitions)) problems.push('partitions must be a list');
  if (problems.length) return new Error(`${where}: not an install manifest: ${problems.join('; ')}`);
  return m as InstallManifest;
}
