// units: sizes and durations as people read them, shared by the views and the dashboard.

/** KiB as 512Ki, 130Mi, 1.2Gi (free(1)'s habit). */
export const kibText = (n: number): string => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)}Gi`
  : n >= 1024 ? `${(n / 1024).toFixed(0)}Mi` : `${n}Ki`);

/** Seconds as "1d 2h 3m 4s", the larger units only when they are not zero. */
export const uptimeText = (s: number): string => {
  const d = Math.floor(s / 86400); const h = Math.floor((s % 86400) / 3600); const m = Math.floor((s % 3600) / 60);
  return `${d ? `${d}d ` : ''}${h ? `${h}h ` : ''}${m}m ${Math.floor(s % 60)}s`;
};
