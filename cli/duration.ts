// duration: the one parser of the durations cosictl's flags take (--try, --timeout).
import { CliError, EXIT } from './errors.ts';

/** "60s", "5m", "1h", "90" (seconds) -> seconds, within 1 s .. 24 h; `flag` names the flag in the error. */
export function parseDuration(flag: string, text: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(text.trim());
  if (!m) throw new CliError(`--${flag}: "${text}" is not a duration (e.g. 60s, 5m, 1h)`, EXIT.usage);
  const n = Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'] ?? 1);
  if (n < 1 || n > 86_400) throw new CliError(`--${flag}: ${text} is outside 1s..24h`, EXIT.usage);
  return n;
}
