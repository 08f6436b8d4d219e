// runtime-floor: the program of bench:boot's second floor, run as PID 1 from the same executable setup as ours
// (image/sea.ts's Node, the system image, stage0): its first line is the earliest any program of ours can speak.
// CLOCK_MONOTONIC counts from boot. It stays up (PID 1 must not exit); the benchmark ends the VM.
const seconds = Number(process.hrtime.bigint()) / 1e9;
process.stdout.write(`RUNTIME READY uptime=${seconds.toFixed(3)}s\n`);
setInterval(() => {}, 1 << 30);
