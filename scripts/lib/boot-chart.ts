// boot-chart: one boot as a picture, the way `systemd-analyze plot` shows one: a row per process and per PID 1
// phase on a time axis, the milestones as vertical lines (each with its ratio to the floor), the used memory as a
// curve below with the budget marked. bench:boot reads the timeline from the guest's console (bootTimeline) and
// writes the SVG (bootChartSvg) beside its JSON.
import {
  parseMemorySamples, parseMilestones, parseProcesses, parseReady, READY_RE,
} from '../../init/boot/ready-line.ts';

export interface Span { name: string; start: number; end: number }
export interface BootTimeline {
  /** Guest seconds at which the kernel started init and init reached its JS main. */
  initStart: number;
  mainStart: number;
  /** PID 1's phases (`phase X done in N ms`), in order. */
  phases: Span[];
  /** Each plugin from its process's start to its "running N controller(s)" line (end: the chart's end if none). */
  plugins: (Span & { ready: boolean })[];
  /** ready, then each milestone PID 1 printed, in guest seconds. */
  milestones: { name: string; at: number }[];
  /** Used memory (MemTotal - MemAvailable) over the boot. */
  memory: { at: number; usedKiB: number }[];
}

const LOG_TIME = /^\[init (\d+\.\d+)\] /;

/** The timeline of one boot from its console text. */
export function bootTimeline(text: string): BootTimeline {
  const ready = parseReady(READY_RE.exec(text)?.[0] ?? '');
  if (!ready) throw new Error('the console has no APPLIANCE READY line: not a boot of the appliance, or cut short');
  const phases: Span[] = [];
  const pluginReady = new Map<string, number>();
  for (const line of text.split(/\r?\n/)) {
    const at = LOG_TIME.exec(line);
    if (!at) continue;
    const phase = / phase (\S+) done in ([\d.]+)ms$/.exec(line);
    if (phase) {
      const end = Number(at[1]);
      phases.push({ name: phase[1]!, start: end - Number(phase[2]) / 1000, end });
    }
    const running = / engine\/plugin\/(\S+): \S+: running \d+ controller\(s\)/.exec(line);
    if (running && !pluginReady.has(running[1]!)) pluginReady.set(running[1]!, Number(at[1]));
  }
  const printed = parseMilestones(text);
  const milestones = [{ name: 'ready', at: ready.uptime }, ...printed.map((m) => ({ name: m.name, at: m.uptime }))];
  const memory = [
    ...parseMemorySamples(text).map((m) => ({ at: m.uptime, usedKiB: m.usedKiB })),
    { at: ready.uptime, usedKiB: ready.memUsedKiB },
    ...printed.map((m) => ({ at: m.uptime, usedKiB: m.memUsedKiB })),
  ].sort((a, b) => a.at - b.at);
  const end = Math.max(...milestones.map((m) => m.at), ...memory.map((m) => m.at));
  const plugins = parseProcesses(text).filter((p) => p.name.startsWith('plugin/')).map((p) => {
    const name = p.name.slice('plugin/'.length);
    const at = pluginReady.get(name);
    return { name, start: p.startedSeconds, end: at ?? end, ready: at !== undefined };
  });
  return { initStart: ready.initStart, mainStart: ready.mainStart, phases, plugins, milestones, memory };
}

export interface ChartOptions {
  title: string;
  /** The static init's ready on the same kernel: each milestone is also shown as a multiple of it. */
  floor: number;
  /** The runtime's own start (bench:boot's second floor: a two-line program as PID 1 made like ours), when measured. */
  runtimeFloor?: number;
  /** The last of five more processes of the runtime first running (the runtime floor's children), when measured. */
  runtimeFloorPlugins?: number;
  /** A dashed line on the memory curve (MiB). */
  memoryBudgetMiB?: number;
  /** Used memory with the runtime floor's six processes idle (MiB): a grey dashed line on the curve, when measured. */
  memoryFloorMiB?: number;
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  .replace(/"/g, '&quot;');
const f1 = (n: number) => n.toFixed(1);

const ROW = 18;
const LEFT = 150;
const WIDTH = 1100;
/** Room right of the time axis's end for the labels of what ends there. */
const RIGHT = 150;
const MEMORY_HEIGHT = 140;
const COLORS = { kernel: '#bbbbbb', node: '#9ecae1', phase: '#3182bd', plugin: '#74c476', waiting: '#e5f5e0' };

/** The chart as a standalone SVG document. */
export function bootChartSvg(t: BootTimeline, o: ChartOptions): string {
  const rows: { label: string; spans: { start: number; end: number; fill: string; text?: string }[] }[] = [
    { label: 'kernel, stage0', spans: [{ start: 0, end: t.initStart, fill: COLORS.kernel }] },
    { label: 'init: Node starts', spans: [{ start: t.initStart, end: t.mainStart, fill: COLORS.node }] },
    ...t.phases.map((p) => ({
      label: `init: ${p.name}`,
      spans: [{ start: p.start, end: p.end, fill: COLORS.phase, text: `${(1000 * (p.end - p.start)).toFixed(0)} ms` }],
    })),
    ...t.plugins.map((p) => ({
      label: `plugin ${p.name}`,
      spans: [{
        start: p.start, end: p.end, fill: p.ready ? COLORS.plugin : COLORS.waiting,
        text: p.ready ? `${(p.end - p.start).toFixed(2)} s to running` : 'not running',
      }],
    })),
  ];
  const end = Math.max(o.floor, ...t.milestones.map((m) => m.at), ...t.plugins.map((p) => p.end),
    ...t.memory.map((m) => m.at)) * 1.04;
  const x = (s: number) => LEFT + (s / end) * (WIDTH - LEFT - RIGHT);
  const top = 60;
  const rowsBottom = top + rows.length * ROW;
  const memTop = rowsBottom + 40;
  const height = memTop + MEMORY_HEIGHT + 40;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" `
      + `font-size="11">`,
    `<rect width="${WIDTH}" height="${height}" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escape(o.title)}</text>`,
  ];
  // Time axis: a tick a second (half a second on a short boot), through every row.
  const step = end > 12 ? 2 : end > 6 ? 1 : 0.5;
  for (let s = 0; s <= end; s += step) {
    out.push(`<line x1="${f1(x(s))}" y1="${top - 5}" x2="${f1(x(s))}" y2="${memTop + MEMORY_HEIGHT}" `
      + `stroke="#eeeeee"/>`, `<text x="${f1(x(s))}" y="${height - 20}" text-anchor="middle">${s}s</text>`);
  }
  rows.forEach((r, i) => {
    const y = top + i * ROW;
    out.push(`<text x="${LEFT - 6}" y="${y + 13}" text-anchor="end">${escape(r.label)}</text>`);
    for (const s of r.spans) {
      const w = Math.max(1, x(s.end) - x(s.start));
      out.push(`<rect x="${f1(x(s.start))}" y="${y + 2}" width="${f1(w)}" height="${ROW - 4}" fill="${s.fill}"/>`);
      if (s.text) out.push(`<text x="${f1(x(s.start) + w + 4)}" y="${y + 13}" fill="#555555">${escape(s.text)}</text>`);
    }
  });
  // Milestones: the floors first, then each of ours with its multiple of the floor.
  const marks = [{ name: 'floor (static init)', at: o.floor, color: '#999999' },
    ...(o.runtimeFloor === undefined ? [] : [{
      name: `runtime floor ${(o.runtimeFloor / o.floor).toFixed(2)}x`, at: o.runtimeFloor, color: '#999999',
    }]),
    ...(o.runtimeFloorPlugins === undefined ? [] : [{
      name: `+5 processes ${(o.runtimeFloorPlugins / o.floor).toFixed(2)}x`, at: o.runtimeFloorPlugins,
      color: '#999999',
    }]),
    ...t.milestones.map((m) => ({ name: `${m.name} ${(m.at / o.floor).toFixed(2)}x`, at: m.at, color: '#d62728' }))];
  marks.forEach((m, i) => {
    out.push(`<line x1="${f1(x(m.at))}" y1="${top - 5}" x2="${f1(x(m.at))}" y2="${memTop + MEMORY_HEIGHT}" `
      + `stroke="${m.color}" stroke-dasharray="4,3"/>`,
    `<text x="${f1(x(m.at) + 3)}" y="${34 + (i % 2) * 12}" fill="${m.color}">`
      + `${escape(`${m.name} ${m.at.toFixed(2)}s`)}</text>`);
  });
  // Memory: used MiB over time, scaled to the larger of the peak and the budget.
  const peak = Math.max(...t.memory.map((m) => m.usedKiB / 1024), o.memoryBudgetMiB ?? 0) * 1.1 || 1;
  const y = (mib: number) => memTop + MEMORY_HEIGHT - (mib / peak) * MEMORY_HEIGHT;
  out.push(`<text x="${LEFT}" y="${memTop - 8}">used memory (MemTotal - MemAvailable)</text>`,
    `<line x1="${LEFT}" y1="${memTop + MEMORY_HEIGHT}" x2="${WIDTH - RIGHT}" y2="${memTop + MEMORY_HEIGHT}" `
      + `stroke="#999999"/>`);
  const mibStep = peak > 256 ? 128 : peak > 128 ? 64 : 32;
  for (let mib = 0; mib <= peak; mib += mibStep) {
    out.push(`<text x="${LEFT - 6}" y="${f1(y(mib) + 4)}" text-anchor="end">${mib} MiB</text>`);
  }
  /** A dashed horizontal line across the memory curve, labelled at its right end. */
  const level = (mib: number, color: string, label: string) => out.push(
    `<line x1="${LEFT}" y1="${f1(y(mib))}" x2="${WIDTH - RIGHT}" y2="${f1(y(mib))}" stroke="${color}" `
      + `stroke-dasharray="6,3"/>`,
    `<text x="${WIDTH - RIGHT + 4}" y="${f1(y(mib) + 4)}" fill="${color}">${escape(label)}</text>`);
  if (o.memoryFloorMiB !== undefined) level(o.memoryFloorMiB, '#999999', `runtime ${o.memoryFloorMiB.toFixed(0)} MiB`);
  if (o.memoryBudgetMiB !== undefined) level(o.memoryBudgetMiB, '#ff7f0e', `budget ${o.memoryBudgetMiB} MiB`);
  if (t.memory.length) {
    const points = t.memory.map((m) => `${f1(x(m.at))},${f1(y(m.usedKiB / 1024))}`).join(' ');
    const last = t.memory[t.memory.length - 1]!;
    out.push(`<polyline points="${points}" fill="none" stroke="#6a51a3" stroke-width="2"/>`,
      `<text x="${f1(x(last.at) + 4)}" y="${f1(y(last.usedKiB / 1024) - 4)}" fill="#6a51a3">`
        + `${f1(last.usedKiB / 1024)} MiB</text>`);
  }
  out.push('</svg>', '');
  return out.join('\n');
}
