/** Shapes shared by the rates engine, its cache and the sessions that record a rate. */

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
