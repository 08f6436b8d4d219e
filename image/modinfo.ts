// modinfo: reads the `.modinfo` section of a kernel module (ELF64, little-endian), the
// NUL-separated key=value strings depmod reads: name, depends, alias, license, ...
// Enough ELF to find one section by name; nothing is relocated or executed.
import { moduleNameOf } from '../machinery/kernel/modules-dep.ts';

export type Modinfo = Map<string, string[]>;

export class ElfError extends Error {
  constructor(message: string, readonly file: string) { super(`${file}: ${message}`); }
}

/** The bytes of the section called `name`, or undefined when the file has none. */
export function elfSection(elf: Buffer, name: string, file = '<buffer>'): Buffer | undefined {
  if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46) throw new ElfError('not an ELF file', file);
  if (elf[4] !== 2 || elf[5] !== 1) throw new ElfError('not a 64-bit little-endian ELF file', file);
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const shstrndx = elf.readUInt16LE(0x3e);
  if (shoff + shnum * shentsize > elf.length || shstrndx >= shnum) throw new ElfError(
    'section headers run past the end of the file', file,
  );
  const header = (i: number) => {
    const at = shoff + i * shentsize;
    return {
      name: elf.readUInt32LE(at),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      size: Number(elf.readBigUInt64LE(at + 0x20)),
    };
  };
  const strtab = header(shstrndx);
  for (let i = 0; i < shnum; i++) {
    const h = header(i);
    const start = strtab.offset + h.name;
    const end = elf.indexOf(0, start);
    if (elf.toString('latin1', start, end) !== name) continue;
    if (h.offset + h.size > elf.length) throw new ElfError(`section ${name} runs past the end of the file`, file);
    return elf.subarray(h.offset, h.offset + h.size);
  }
  return undefined;
}

export function readModinfo(ko: Buffer, file = '<buffer>'): Modinfo {
  const section = elfSection(ko, '.modinfo', file);
  if (!section) throw new ElfError('no .modinfo section (not a kernel module)', file);
  const info: Modinfo = new Map();
  for (const field of section.toString('utf8').split('\0')) {
    const eq = field.indexOf('=');
    if (eq <= 0) continue; // padding between fields
    const key = field.slice(0, eq);
    info.set(key, [...(info.get(key) ?? []), field.slice(eq + 1)]);
  }
  return info;
}

/** The module's name as the kernel knows it: from .modinfo, else from the file name (moduleNameOf). */
export function moduleName(info: Modinfo, path: string): string {
  return info.get('name')?.[0] ?? moduleNameOf(path);
}

/** The direct dependencies named in .modinfo (`depends=a,b`), as module names (usb-common -> usb_common). */
export function moduleDepends(info: Modinfo): string[] {
  return (info.get('depends')?.[0] ?? '').split(',').filter(Boolean).map((d) => d.replace(/-/g, '_'));
}
