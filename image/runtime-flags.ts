// runtime-flags: the Node and V8 options every process of the appliance starts with (PID 1 and each plugin are
// the one executable), written into the SEA so no command line or environment can drop them.
// Why each (measured with bench:boot, figures in ARCHITECTURE.md, "Which Node"):
// - a young generation of at most 1 MiB per semi-space: V8 grows it to 16 MiB under allocation and rarely gives it
//   back, which is most of an idle plugin's private memory; a scavenge of 1 MiB costs well under a millisecond.
// - one V8 platform worker thread instead of four: idle threads each keep a stack and a malloc arena.
export const APPLIANCE_EXEC_ARGV: readonly string[] = ['--max-semi-space-size=1', '--v8-pool-size=1'];
