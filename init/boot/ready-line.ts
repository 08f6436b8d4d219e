// ready-line: the one unmistakable line printed when the system is ready, and the milestone
// lines after it (every plugin running, the network configured). Tests and `npm run bench:boot`
// parse them, so their format lives here with their parsers.
import type { ProcessCost } from './process-cost.ts';

export interface ReadyFigures { uptime: number; initStart: number; mainStart: number; memUsedKiB: number }

export const READY_MARK = 'APPLIANCE READY';

export function formatReady(f: ReadyFigures): string {
  return `${READY_MARK} uptime=${f.uptime.toFixed(3)}s init_start=${f.initStart.toFixed(3)}s `
    + `main_start=${f.mainStart.toFixed(3)}s mem_used=${f.memUsedKiB}KiB`;
}

/** Matches only a complete ready line (console output arrives in arbitrary chunks). */
export const READY_RE = /APPLIANCE READY uptime=([\d.]+)s init_start=([\d.]+)s main_start=([\d.]+)s mem_used=(\d+)KiB/;

export function parseReady(line: string): ReadyFigures | null {
  const m = READY_RE.exec(line);
  if (!m) return null;
  return { uptime: Number(m[1]), initStart: Number(m[2]), mainStart: Number(m[3]), memUsedKiB: Number(m[4]) };
}

/** A milestone after ready: the name (health.ts Milestone), guest uptime and used memory then. */
export interface MilestoneFigures { name: string; uptime: number; memUsedKiB: number }

export const MILESTONE_MARK = 'APPLIANCE MILESTONE';

export function formatMilestone(f: MilestoneFigures): string {
  return `${MILESTONE_MARK} ${f.name} uptime=${f.uptime.toFixed(3)}s mem_used=${f.memUsedKiB}KiB`;
}

export const MILESTONE_RE = /APPLIANCE MILESTONE (\w+) uptime=([\d.]+)s mem_used=(\d+)KiB/;
/** A complete line of the milestone `name`. */
export const milestoneLine = (name: string) => new RegExp(MILESTONE_RE.source.replace('(\\w+)', name));

/** Every complete milestone line in `text`, in order. */
export function parseMilestones(text: string): MilestoneFigures[] {
  return [...text.matchAll(new RegExp(MILESTONE_RE.source, 'g'))].map((m) => (
    { name: m[1]!, uptime: Number(m[2]), memUsedKiB: Number(m[3]) }));
}

// One process's memory and CPU time (process-cost.ts), printed for each process once the network is
// configured and every plugin runs (at the later of those two milestones).
export const PROCESS_MARK = 'APPLIANCE PROCESS';

export function formatProcess(f: ProcessCost): string {
  return `${PROCESS_MARK} ${f.name} pid=${f.pid} rss=${f.rssKiB}KiB pss=${f.pssKiB}KiB private=${f.privateKiB}KiB `
    + `cpu=${f.cpuSeconds.toFixed(2)}s started=${f.startedSeconds.toFixed(2)}s`;
}

const PROCESS_RE =
  /APPLIANCE PROCESS (\S+) pid=(\d+) rss=(\d+)KiB pss=(\d+)KiB private=(\d+)KiB cpu=([\d.]+)s started=([\d.]+)s/g;

/** Every complete process line in `text`, in order. */
export function parseProcesses(text: string): ProcessCost[] {
  return [...text.matchAll(PROCESS_RE)].map((m) => ({
    name: m[1]!, pid: Number(m[2]), rssKiB: Number(m[3]), pssKiB: Number(m[4]), privateKiB: Number(m[5]),
    cpuSeconds: Number(m[6]), startedSeconds: Number(m[7]),
  }));
}

// Where the used memory goes at that moment (machinery/sys/meminfo.ts MEMORY_PARTS), printed beside the processes.
export const MEMINFO_MARK = 'APPLIANCE MEMINFO';

export const formatMeminfo = (parts: ReadonlyMap<string, number>): string =>
  `${MEMINFO_MARK} ${[...parts].map(([k, v]) => `${k}=${v}KiB`).join(' ')}`;

/** The last complete meminfo line in `text`, by field; empty when there is none. */
export function parseMeminfoLine(text: string): Map<string, number> {
  const line = text.split('\n').filter((l) => l.includes(MEMINFO_MARK)).pop() ?? '';
  return new Map([...line.matchAll(/(\w+)=(\d+)KiB/g)].map((m) => [m[1]!, Number(m[2])]));
}

// The used memory at one moment of the boot (memory-trace.ts; only with appliance.bench.memtrace).
export const MEMORY_MARK = 'APPLIANCE MEMORY';
export interface MemorySample { uptime: number; usedKiB: number }

export const formatMemorySample = (m: MemorySample): string =>
  `${MEMORY_MARK} uptime=${m.uptime.toFixed(3)}s used=${m.usedKiB}KiB`;

/** Every complete memory sample in `text`, in order. */
export function parseMemorySamples(text: string): MemorySample[] {
  return [...text.matchAll(/APPLIANCE MEMORY uptime=([\d.]+)s used=(\d+)KiB/g)]
    .map((m) => ({ uptime: Number(m[1]), usedKiB: Number(m[2]) }));
}
