import t from 'tap';
import { parseLdd, sharedLibs } from './elf-deps.ts';

t.test('parses ldd output', async (t) => {
  const text = `\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n`
    + `\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n`;
  t.same(parseLdd(text), ['/lib/x86_64-linux-gnu/libc.so.6', '/lib64/ld-linux-x86-64.so.2']);
  t.throws(() => parseLdd('\tlibfoo.so.1 => not found\n', '/bin/x'), /\/bin\/x: ldd cannot resolve libfoo.so.1/);
});

t.test('the running node needs libc and the loader', async (t) => {
  const libs = sharedLibs([process.execPath]).map((l) => l.path);
  t.ok(libs.some((p) => p.endsWith('/libc.so.6')), 'libc');
  t.ok(libs.some((p) => /ld-linux/.test(p)), 'ELF interpreter');
});
