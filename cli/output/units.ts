// units: sizes, durations and log levels as people read them, shared by the views, logs and the dashboard.

/** KiB as 512Ki, 130Mi, 1.2Gi (free(1)'s habit). */
export const kibText = (n: number): string => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)}Gi`
  : n >= 1024 ? `${(n / 1024).toFixed(0)}Mi` : `${n}Ki`);

/** Seconds as "1d 2h 3m 4s", the larger units only when they are not zero. */
export const uptimeText = (s: number): string => {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${d ? `${d}d ` : ''}${h ? `${h}h ` : ''}${m}m ${Math.floor(s % 60)}s`;
};

const LEVEL_WORDS: Record<string, string> = { error: 'ERROR', warning: 'WARN', info: 'INFO', debug: 'DEBUG' };

/** A log line's level as `logs` and the dashboard print it: one word, padded to five columns ('?' if unknown). */
export const levelWord = (level: string | undefined): string => (LEVEL_WORDS[level ?? ''] ?? '?').padEnd(5);
