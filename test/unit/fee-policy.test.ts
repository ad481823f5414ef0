/**
 * The fee policy (lib/treasury/fee-policy.ts) and its booking primitive (lib/treasury/fee-booking.ts):
 * who pays each movement; a merchant-paid cost is charged exactly what the chain took, never less, and
 * above its quote only from what the wallet has beyond it; platform costs never touch a wallet; parked
 * top-up gas is never a wallet's balance. Property-tested with fast-check against a real SQLite ledger.
 */
import fc from 'fast-check';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import {
  LedgerBatch,
  accountId,
  available,
  checkStoredLedger,
  loadLedger,
  parkedGasAccount,
  postedBalance,
  walletAccount,
} from '../../lib/ledger/index.ts';
import { FEE_PAYER, ethereumQuote, solanaQuote, trueUp } from '../../lib/treasury/fee-policy.ts';
import { bookNetworkCost, bookParkedTopup, parkedGas, reserveFee } from '../../lib/treasury/fee-booking.ts';

const ETH = 'ethereum:testnet:ETH';

describe('fee policy', () => {
  it('money out is the merchant’s cost; money in and internal moves are the platform’s', () => {
    expect(FEE_PAYER).toEqual({
      payout: 'merchant',
      refund: 'merchant',
      sweep: 'platform',
      custody_move: 'platform',
      x402_settlement: 'platform',
      faucet_drip: 'platform',
    });
  });

  it('quotes: Ethereum gas limit × price; Solana 5,000 lamports a signature plus a new token account’s rent', () => {
    expect(ethereumQuote(21_000n, 2_000_000_000n)).toMatchObject({ fee_subunits: 42_000_000_000_000n, rent: 0n });
    expect(solanaQuote(1, 2_039_280n)).toEqual({ fee_subunits: 2_044_280n, network_fee: 5_000n, rent: 2_039_280n });
  });

  it('true-up: never less than paid, above the quote only from the balance beyond it', () => {
    fc.assert(
      fc.property(fc.bigInt(0n, 10n ** 18n), fc.bigInt(0n, 10n ** 18n), fc.bigInt(-(10n ** 18n), 10n ** 18n), (reserved, paid, beyond) => {
        const t = trueUp(reserved, paid, beyond);
        expect(t.charged + t.uncovered).toBe(paid); // every unit the chain took is booked to someone
        expect(t.fromReservation).toBe(paid < reserved ? paid : reserved);
        expect(t.charged <= reserved || t.beyondQuote <= (beyond > 0n ? beyond : 0n)).toBe(true);
        if (paid <= reserved) expect(t).toMatchObject({ charged: paid, uncovered: 0n });
        expect(t.uncovered >= 0n && t.beyondQuote >= 0n).toBe(true);
      }),
    );
  });
});

describe('fee booking', () => {
  let store: SqliteStore;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.ensure(COLLECTIONS);
  });
  afterEach(() => store.close());

  const fund = async (wallet: string, amount: bigint) => {
    const b = new LedgerBatch(store);
    await b.transfer({
      id: `dep:${wallet}:${amount}`,
      kind: 'deposit',
      asset: ETH,
      amount,
      debit_account: accountId('sys:chain', ETH),
      credit_account: walletAccount(wallet, ETH),
    });
    await store.write(b.ops());
  };
  const acc = async (id: string) => (await loadLedger(store)).accounts.find((a) => a.id === id);

  it('a payout is charged exactly what the chain took, reserved at acceptance, never more than the reservation when it covered it', async () => {
    await fund('wal_a', 1_000n);
    let b = new LedgerBatch(store);
    await reserveFee(b, { key: 'po_1', walletId: 'wal_a', asset: ETH, amount: 300n, refs: { payout_id: 'po_1' } });
    await store.write(b.ops());
    expect(available((await acc(walletAccount('wal_a', ETH)))!)).toBe(700n);
    b = new LedgerBatch(store);
    expect(
      await bookNetworkCost(b, { movement: 'payout', key: 'po_1', asset: ETH, fee: 210n, walletId: 'wal_a', refs: { payout_id: 'po_1' } }),
    ).toEqual({ charged: 210n, platform: 0n });
    await store.write(b.ops());
    expect(available((await acc(walletAccount('wal_a', ETH)))!)).toBe(790n);
    expect(postedBalance((await acc(accountId('sys:fees', ETH)))!)).toBe(210n);
    expect((await checkStoredLedger(store)).ok).toBe(true);
  });

  it('platform costs come from the gas wallet or the gas parked at the paying address; parked gas is never a wallet balance', async () => {
    await fund('wal_a', 50n);
    let b = new LedgerBatch(store);
    await bookParkedTopup(b, 'custody:po_2:topup:0', '0xabc', ETH, 1_000n, 21n, {});
    await store.write(b.ops());
    b = new LedgerBatch(store);
    expect(await parkedGas(b, '0xabc', ETH)).toBe(1_000n);
    await bookNetworkCost(b, { movement: 'custody_move', key: 'custody:po_2:move:0', asset: ETH, fee: 770n, address: '0xabc', refs: {} });
    await bookNetworkCost(b, { movement: 'sweep', key: 'sweep:x', asset: 'solana:testnet:SOL', fee: 5_000n, rent: 2_039_280n, refs: {} });
    await store.write(b.ops());
    expect(postedBalance((await acc(parkedGasAccount('0xabc', ETH)))!)).toBe(230n);
    expect(available((await acc(walletAccount('wal_a', ETH)))!)).toBe(50n); // untouched by the platform's gas
    expect(postedBalance((await acc(accountId('sys:gas', ETH)))!)).toBe(-1_021n); // top-up + its fee: the gas wallet's loss
    expect(postedBalance((await acc(accountId('sys:rent', 'solana:testnet:SOL')))!)).toBe(2_039_280n);
    expect((await checkStoredLedger(store)).ok).toBe(true);
  });

  it('property: a merchant-paid cost books every unit the chain took, and never drives the wallet below zero', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt(0n, 5_000n), fc.bigInt(0n, 3_000n), fc.bigInt(0n, 6_000n), async (balance, quote, paid) => {
        const s = new SqliteStore(':memory:');
        await s.ensure(COLLECTIONS);
        try {
          const key = `po_${balance}_${quote}_${paid}`;
          if (balance > 0n) {
            const f = new LedgerBatch(s);
            await f.transfer({
              id: 'dep',
              kind: 'deposit',
              asset: ETH,
              amount: balance,
              debit_account: accountId('sys:chain', ETH),
              credit_account: walletAccount('wal_p', ETH),
            });
            await s.write(f.ops());
          }
          const reserved = quote <= balance ? quote : 0n;
          let b = new LedgerBatch(s);
          await reserveFee(b, { key, walletId: 'wal_p', asset: ETH, amount: reserved, refs: {} });
          await s.write(b.ops());
          b = new LedgerBatch(s);
          const booked = await bookNetworkCost(b, {
            movement: 'payout',
            key,
            asset: ETH,
            fee: paid,
            walletId: 'wal_p',
            address: '0xp',
            refs: {},
          });
          await s.write(b.ops());
          expect(booked.charged + booked.platform).toBe(paid);
          const { accounts } = await loadLedger(s);
          const w = accounts.find((a) => a.id === walletAccount('wal_p', ETH));
          const left = w ? available(w) : 0n;
          expect(left).toBe(balance - booked.charged);
          expect(left >= 0n).toBe(true);
          if (paid <= reserved) expect(booked.platform).toBe(0n);
          expect((await checkStoredLedger(s)).ok).toBe(true);
        } finally {
          s.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
