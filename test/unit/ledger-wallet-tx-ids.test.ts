/** Wallet-transaction row ids (lib/ledger/wallet-tx-ids.ts): derived from the transfer alone, ordered by time in format 2. */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { WTX_FORMAT, timeHex, walletTxId, walletTxIds } from '../../lib/ledger/wallet-tx-ids.ts';
import { decodeTxCursor, encodeTxCursor } from '../../lib/wallets/present.ts';

const SHAPE = /^wtx_[0-9a-f]{26}$/;
// from 2001 to 2286 in ms: the years a created_at can name
const ms = fc.integer({ min: 1e12, max: 1e13 - 1 });
const transferId = fc.string({ minLength: 1, maxLength: 80 });
const iso = (t: number) => new Date(t).toISOString();

describe('wallet transaction ids', () => {
  it('format 1 (a transfer without the marker) is the sha256 of `<transfer id>|<side>`, as written before format 2', () => {
    fc.assert(
      fc.property(transferId, ms, (id, t) => {
        for (const side of ['debit', 'credit'] as const) {
          const before = `wtx_${createHash('sha256').update(`${id}|${side}`).digest('hex').slice(0, 26)}`;
          expect(walletTxId({ id, created_at: iso(t) }, side)).toBe(before);
        }
      }),
    );
  });

  it('format 2 has the same shape, one id per side, derived from the transfer alone', () => {
    fc.assert(
      fc.property(transferId, ms, (id, t) => {
        const tr = { id, created_at: iso(t), wtx_format: WTX_FORMAT };
        const ids = walletTxIds(tr);
        expect(ids.debit).toMatch(SHAPE);
        expect(ids.credit).toMatch(SHAPE);
        expect(ids.debit).not.toBe(ids.credit);
        expect(walletTxId({ ...tr }, 'debit')).toBe(ids.debit);
        expect(walletTxId({ ...tr }, 'credit')).toBe(ids.credit);
        // the marker decides the format: the same transfer without it keeps its sha256 ids
        expect(walletTxId({ id, created_at: tr.created_at }, 'debit')).not.toBe(ids.debit);
      }),
    );
  });

  it('format 2 ids sort by the transfer creation time, whatever the transfer ids', () => {
    fc.assert(
      fc.property(
        transferId,
        transferId,
        ms,
        ms,
        fc.constantFrom('debit', 'credit'),
        fc.constantFrom('debit', 'credit'),
        (a, b, ta, tb, sa, sb) => {
          fc.pre(ta !== tb);
          const ia = walletTxId({ id: a, created_at: iso(ta), wtx_format: WTX_FORMAT }, sa);
          const ib = walletTxId({ id: b, created_at: iso(tb), wtx_format: WTX_FORMAT }, sb);
          expect(ia < ib).toBe(ta < tb);
        },
      ),
    );
  });

  it('two transfers of one millisecond get different ids', () => {
    fc.assert(
      fc.property(fc.uniqueArray(transferId, { minLength: 2, maxLength: 50 }), ms, (ids, t) => {
        const all = ids.flatMap((id) => Object.values(walletTxIds({ id, created_at: iso(t), wtx_format: WTX_FORMAT })));
        expect(new Set(all).size).toBe(all.length);
      }),
    );
  });

  it('the time prefix is 12 hex digits, in order; a time before 1970 counts as 0', () => {
    fc.assert(
      fc.property(ms, ms, (a, b) => {
        expect(timeHex(a)).toMatch(/^[0-9a-f]{12}$/);
        expect(timeHex(a) < timeHex(b)).toBe(a < b);
      }),
    );
    expect(timeHex(-5)).toBe('000000000000');
  });

  it('a history cursor holds a sort key of either format', () => {
    fc.assert(
      fc.property(transferId, ms, fc.boolean(), (id, t, marked) => {
        const tr = { id, created_at: iso(t), ...(marked ? { wtx_format: WTX_FORMAT } : {}) };
        const key = `${tr.created_at}|${walletTxId(tr, 'credit')}`;
        expect(decodeTxCursor(encodeTxCursor(key))).toBe(key);
      }),
    );
  });
});
