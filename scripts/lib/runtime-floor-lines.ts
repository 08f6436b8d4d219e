// runtime-floor-lines: bench:boot's reader of the runtime floor's console (qemu/floor/runtime-floor.cjs prints
// these lines): Node's own start as PID 1, one more process of it, five more at once, and memory with the five idle.

/** The runtime floor's first line, as PID 1: Node's own start. */
export const RUNTIME_READY_RE = /RUNTIME READY uptime=([\d.]+)s/;
/** PID 1 of the runtime floor once its five children idle: used memory then (runtime-floor.cjs). */
export const RUNTIME_IDLE_RE = /RUNTIME IDLE processes=(\d+) used=(\d+)KiB uptime=([\d.]+)s/;

/** What the runtime floor's children took: from PID 1's first line, each spawned and first running. */
export interface RuntimeFloorChildren {
  /** One child spawned alone: guest uptime at its first line. */
  alone: number;
  /** Five spawned at once: guest uptime when the last of them first ran, and when they were spawned. */
  lastOfFive: number;
  fiveSpawned: number;
  /** Used memory with PID 1 and the five idle (KiB). */
  idleUsedKiB: number;
}

/** Reads the runtime floor's console (runtime-floor.cjs's lines); an error names the line that is missing. */
export function parseRuntimeFloorChildren(console: string): RuntimeFloorChildren {
  const child = /RUNTIME CHILD (\S+) uptime=([\d.]+)s spawned=([\d.]+)s/g;
  const seen = [...console.matchAll(child)].map((m) => ({ name: m[1]!, at: Number(m[2]), spawned: Number(m[3]) }));
  const alone = seen.find((c) => c.name === 'alone');
  const wave = seen.filter((c) => c.name.startsWith('wave-'));
  const idle = RUNTIME_IDLE_RE.exec(console);
  if (!alone || wave.length !== 5 || !idle) {
    throw new Error(`runtime floor: expected a line of the child spawned alone, five of the wave and the idle line; `
      + `saw ${seen.length} child lines${idle ? '' : ' and no idle line'}`);
  }
  return {
    alone: alone.at,
    lastOfFive: Math.max(...wave.map((c) => c.at)),
    fiveSpawned: Math.min(...wave.map((c) => c.spawned)),
    idleUsedKiB: Number(idle[2]),
  };
}
