/**
 * Wallet-transaction row ids, derived from their transfer alone, so that posting or voiding a pending
 * transfer upserts onto the very rows it created, and a replayed write is a duplicate.
 *
 * Format 2 (transfers that carry `wtx_format: 2`): `wtx_` + the transfer's created_at in ms (12 hex
 * digits) + 13 hex digits of sha256(transfer id) + the side (`0` debit, `1` credit). Rows of new
 * transfers are inserted in time order, so they land on the rightmost pages of the primary-key index
 * instead of a random page each (the sha256-only ids did that: more pages to read and write per commit,
 * the more so as the table grows).
 * Format 1 (no marker: transfers written before format 2): `wtx_` + 26 hex digits of
 * sha256(`<transfer id>|<side>`). A transfer keeps its format for life.
 * Format 3: format 2's ids, and no rows at all: the transfer is its own wallet history
 * (./wallet-history.ts); formats 1 and 2 keep their rows, which a pending transfer posts or voids onto.
 * Every format's ids are `wtx_` and 26 lowercase hex digits (the API's and the history cursor's shape).
 */
import { hash } from 'node:crypto';

export type Side = 'debit' | 'credit';
/** the format of the transfers written now */
export const WTX_FORMAT = 3;
/** the first format whose transfers carry their wallet history themselves (no wallet-transaction rows) */
export const ROWLESS_FORMAT = 3;

/** a transfer of format 3 or later is its own wallet history: it has no stored rows (./wallet-history.ts) */
export const carriesHistory = (t: { wtx_format?: number }) => (t.wtx_format ?? 1) >= ROWLESS_FORMAT;

/** ids of format 2 and later are time-ordered; a transfer without the marker is format 1 */
const timeOrdered = (t: { wtx_format?: number }) => (t.wtx_format ?? 1) >= 2;

/** What the ids are derived from: the transfer's id, creation time and id format. */
export interface WalletTxIdSource {
  id: string;
  created_at: string;
  wtx_format?: number;
}

const legacyId = (transferId: string, side: Side) => `wtx_${hash('sha256', `${transferId}|${side}`, 'hex').slice(0, 26)}`;

/** 12 hex digits of ms since the epoch (until the year 10889); a time before 1970 counts as 0 */
export const timeHex = (ms: number) => Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);

/**
 * Both sides' ids of a transfer (one hash for both in format 2). `createdMs`: its created_at in ms, when
 * the caller has it (the batch that creates the transfer): the same value, without parsing the text.
 */
export function walletTxIds(t: WalletTxIdSource, createdMs?: number): { debit: string; credit: string } {
  if (!timeOrdered(t)) return { debit: legacyId(t.id, 'debit'), credit: legacyId(t.id, 'credit') };
  const prefix = `wtx_${timeHex(createdMs ?? Date.parse(t.created_at))}${hash('sha256', t.id, 'hex').slice(0, 13)}`;
  return { debit: `${prefix}0`, credit: `${prefix}1` };
}

/** The wallet transaction id of one side of a transfer. */
export const walletTxId = (t: WalletTxIdSource, side: Side): string => (timeOrdered(t) ? walletTxIds(t)[side] : legacyId(t.id, side));

/**
 * A transfer's history key (format 3 on): `<created_at>|<its rows' id less the side digit>`. A row's sort key
 * is it and the row's side digit, so the history pages on the transfer's key (./wallet-history.ts).
 */
export const historyKey = (t: WalletTxIdSource, createdMs?: number): string =>
  `${t.created_at}|${walletTxIds(t, createdMs).debit.slice(0, -1)}`;
