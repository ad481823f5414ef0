/** The shape of an exchange rate, shared by the rates engine (lib/rates/), its cache and the sessions that record one. */

/** One spot rate: 1 `base` = `rate` `quote` (decimal string, exact). */
export interface SpotRate {
  base: string;
  quote: string;
  rate: string;
  /** chainlink, http, static or peg */
  source: string;
  /** when the source says the value was observed (ISO, UTC) */
  as_of: string;
}

/** The rate recorded on a session at completion (additive field `completion_rate`). */
export type RecordedRate = SpotRate;
