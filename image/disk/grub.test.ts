// grub: the BIOS patches grub-bios-setup would make, on Debian's real boot.img and a
// core.img made by grub-mkimage; the boot-counting config.
import t from 'tap';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { biosBoot, earlyConfig, espSearch, GRUB_DIR, grubConfig, grubMkimage } from './grub.ts';

const dir = mkdtempSync(join(tmpdir(), 'grub-'));

t.test('BIOS: boot.img points at core.img, core.img lists its own rest', async (t) => {
  const core = join(dir, 'core.img');
  grubMkimage('i386-pc', core, { medium: 'disk', search: espSearch('ABCD-1234'), workDir: dir });
  const img = readFileSync(core);
  const { bootCode, core: patched } = biosBoot(img, 2048);
  t.equal(bootCode.length, 440, 'only the code area of the MBR');
  t.equal(bootCode.readBigUInt64LE(0x5c), 2048n, 'kernel sector');
  t.same([...bootCode.subarray(0x66, 0x68)], [0x90, 0x90], 'floppy check off');
  const original = readFileSync(join(GRUB_DIR, 'i386-pc', 'boot.img'));
  t.same(bootCode.subarray(0x68, 440), original.subarray(0x68, 440), 'the rest of the code as shipped');
  t.equal(patched.length % 512, 0);
  t.equal(patched.readBigUInt64LE(500), 2049n, 'the rest starts after the first sector');
  t.equal(patched.readUInt16LE(508), patched.length / 512 - 1, 'and is the other sectors');
  t.equal(patched.readUInt16LE(510), 0x820);
  t.throws(() => biosBoot(Buffer.alloc(4096), 2048), /no diskboot blocklist/);
  t.throws(() => biosBoot(img, 2048, Buffer.alloc(100)), /boot\.img is 100 bytes/);
});

t.test('UEFI: a PE image for the removable-media path', async (t) => {
  const efi = join(dir, 'BOOTX64.EFI');
  grubMkimage('x86_64-efi', efi, { medium: 'disk', search: espSearch('ABCD-1234'), workDir: dir });
  const b = readFileSync(efi);
  t.equal(b.toString('ascii', 0, 2), 'MZ');
  t.equal(b.toString('ascii', b.readUInt32LE(0x3c), b.readUInt32LE(0x3c) + 4), 'PE\0\0');
  t.ok(b.includes(Buffer.from(earlyConfig(espSearch('ABCD-1234')))),
    'the early config is embedded (core.img compresses it)');
});

t.test('grub.cfg counts down the tries of a new slot, then falls back and says which failed', async (t) => {
  const cfg = grubConfig({ cmdline: 'console=ttyS0', tries: 3 });
  t.match(cfg, /load_env default_slot try_slot tries_left/);
  for (const n of [3, 2, 1]) t.match(cfg, new RegExp(`"\\$tries_left" = ${n} \\]; then\\s+set tries_left=${n - 1}`));
  t.match(cfg, /set tried_slot=\$try_slot\s+set try_slot=\s+save_env tried_slot/);
  t.match(cfg, /save_env try_slot tries_left/);
  t.match(cfg, /set cmdline="console=ttyS0"\nload_env --file \/\$slot\/slot\.env cmdline\n/,
    'the slot\'s own command line, this one without it');
  t.match(cfg, /linux \/\$slot\/vmlinuz \$cmdline appliance\.slot=\$slot/);
  t.throws(() => grubConfig({ cmdline: 'a="b c"', tries: 3 }), /not allowed/, 'quotes would change the words');
  t.match(cfg, /initrd \/\$slot\/initramfs\.cpio\.zst\nboot\n[\s\S]*reboot\n$/);
});
