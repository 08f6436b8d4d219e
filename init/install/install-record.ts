// install-record: a small file the installer leaves on the new disk's STATE saying which machine
// it was installed for, when, and what. A later install reads it to tell a reinstall of this
// machine (allowed) from another machine's disk (refused unless the request says wipe).
export const INSTALL_RECORD_FILE = 'installed.json';

export interface InstallRecord {
  /** The SMBIOS UUID of the machine that installed it; empty when the machine had none. */
  machineId: string;
  version: string;
  commit: string;
  /** RFC 3339. */
  installedAt: string;
  /** The disk as the installing machine named it. */
  disk: string;
}

export const formatInstallRecord = (r: InstallRecord): string => `${JSON.stringify(r, null, 2)}\n`;

/** The record in `text`, or an Error naming `where`. */
export function parseInstallRecord(text: string, where: string): InstallRecord | Error {
  let r: Partial<InstallRecord>;
  try {
    r = JSON.parse(text) as Partial<InstallRecord>;
  } catch (e) {
    return new Error(`${where}: not JSON: ${(e as Error).message}`, { cause: e });
  }
  const fields = ['machineId', 'version', 'commit', 'installedAt', 'disk'] as const;
  const bad = fields.filter((k) => typeof r?.[k] !== 'string');
  return bad.length ? new Error(`${where}: not an install record (${bad.join(', ')} missing)`) : r as InstallRecord;
}
