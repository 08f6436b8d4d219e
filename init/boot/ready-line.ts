// ready-line: the one unmistakable line printed when the system is ready. Tests and
// `npm run bench:boot` parse it, so its format lives here with its parser.
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
