// runtime-floor: the program of bench:boot's second floor, run as PID 1 from the same executable setup as ours
// (image/sea.ts's Node, the system image, stage0): its first line is the earliest any program of ours can speak.
// Then what the process rule costs before any code of ours: the same executable spawned as the engine spawns a
// plugin, once alone (a machine's network or config needs one plugin process to run), then five at once (every
// plugin of the image), each child saying when it first ran; and the used memory with the five idle beside PID 1.
// CLOCK_MONOTONIC counts from boot, in every process. It stays up (PID 1 must not exit); the benchmark ends the VM.
const uptime = () => (Number(process.hrtime.bigint()) / 1e9).toFixed(3);
if (process.pid !== 1) {
  // The child's name is its last argument (a SEA's argv repeats the executable before the arguments).
  process.stdout.write(`RUNTIME CHILD ${process.argv[process.argv.length - 1]} uptime=${uptime()}s\n`);
  if (process.argv.includes('alone')) process.exit(0);
  setInterval(() => {}, 1 << 30);
} else {
  process.stdout.write(`RUNTIME READY uptime=${uptime()}s\n`);
  const { spawn } = require('node:child_process');
  const { mkdirSync, readFileSync } = require('node:fs');
  /** Spawns a child of this executable; resolves once it has spoken (its line and when it was spawned printed). */
  const start = (name) => new Promise((resolve) => {
    const spawned = uptime();
    const child = spawn(process.execPath, [name], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.once('data', (d) => {
      process.stdout.write(`${String(d).trim()} spawned=${spawned}s\n`);
      resolve(child);
    });
  });
  /**
   * Used memory as `free` counts it (MemTotal - MemAvailable), as PID 1 of ours prints it. Stage0 mounts no /proc:
   * it is mounted here through the system image's addon (the only thing of ours this program loads, after the
   * children's lines; a single executable's `require` knows only built-ins).
   */
  const usedKiB = () => {
    const { dirname, join } = require('node:path');
    const addon = { exports: {} };
    process.dlopen(addon, join(dirname(process.execPath), 'lib', 'appliance_native.node'));
    mkdirSync('/proc', { recursive: true });
    addon.exports.mount('proc', '/proc', 'proc', 0);
    const m = Object.fromEntries(readFileSync('/proc/meminfo', 'utf8').split('\n')
      .map((l) => /^(\w+):\s+(\d+)/.exec(l)).filter(Boolean).map((x) => [x[1], Number(x[2])]));
    return m.MemTotal - m.MemAvailable;
  };
  (async () => {
    const alone = await start('alone');
    await new Promise((r) => alone.once('exit', r));
    await Promise.all(['wave-1', 'wave-2', 'wave-3', 'wave-4', 'wave-5'].map(start));
    // A moment for the children to settle after their first line (their event loops idle, as a plugin's would).
    await new Promise((r) => setTimeout(r, 2000));
    process.stdout.write(`RUNTIME IDLE processes=6 used=${usedKiB()}KiB uptime=${uptime()}s\n`);
  })();
  setInterval(() => {}, 1 << 30);
}
