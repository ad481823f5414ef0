/** Duration strings such as 15m, 45m, 1h, 30s, 2d (one number and one unit). */
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * UNITS[m[2]];
}
