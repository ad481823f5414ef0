/**
 * Property tests of refunds: whatever the interleaving, what a session's refunds take never exceeds what
 * it received.
 * 1. The rules alone (lib/refunds/rules.ts): random sequences of deposits, refunds (with or without an
 *    amount) and refund failures keep refunded ≤ received and refunded = the refunds not failed.
 * 2. Acceptance against a real SQLite store (lib/refunds/accept.ts): random refunds (on-chain and
 *    simulated money, with and without an amount), refund failures (the executor's failure write with the
 *    refund kind's end ops) and new deposits, all started at once with random delays, so their reads and
 *    compare-and-set writes interleave. After each run: the session's refund total equals the refunds not
 *    failed, is at most what the session received, each kind of money stays within what arrived of it,
 *    every refusal was a 409, and the ledger's invariants hold.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import { isConflict, type Store, type WriteOp } from '../../lib/store/port.ts';
import { LedgerBatch, checkLedger, loadLedger, settlementOps, settlementPostOps } from '../../lib/ledger/index.ts';
import { buildRails } from '../../config/rails.ts';
import { openWalletDirectory, type WalletDirectory } from '../../lib/wallets/directory.ts';
import { feeQuoter } from '../../lib/treasury/fee-quote.ts';
import { ServiceError } from '../../lib/core/errors.ts';
import { acceptRefund, checkRefund, type RefundDeps } from '../../lib/refunds/accept.ts';
import { addressInspector } from '../../lib/refunds/destination.ts';
import { refundKind } from '../../lib/refunds/execution.ts';
import { REFUNDS, REFUND_TOTALS, type RefundDoc, type RefundTotalsDoc } from '../../lib/refunds/model.ts';
import { basisOf, decideRefund, leftOf, receivedOf, refundedOf, type RefundBasis } from '../../lib/refunds/rules.ts';
import type { DepositRecord, PaymentSessionState } from '../../lib/sessions/payment-session.ts';

describe('refund rules', () => {
  type Step = { t: 'deposit'; amount: bigint; simulated: boolean } | { t: 'refund'; amount: bigint | null } | { t: 'fail'; n: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ t: fc.constant('deposit' as const), amount: fc.bigInt({ min: 1n, max: 10n ** 12n }), simulated: fc.boolean() }),
    fc.record({ t: fc.constant('refund' as const), amount: fc.option(fc.bigInt({ min: 1n, max: 10n ** 12n })) }),
    fc.record({ t: fc.constant('fail' as const), n: fc.nat(20) }),
  );

  it('refunded never exceeds received, and equals the refunds not failed', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.array(step, { maxLength: 40 }), (expected, steps) => {
        const b: RefundBasis = { expected, receivedChain: 0n, receivedSimulated: 0n, refundedChain: 0n, refundedSimulated: 0n };
        const live: Array<{ amount: bigint; simulated: boolean }> = [];
        for (const s of steps) {
          if (s.t === 'deposit') {
            if (s.simulated) b.receivedSimulated += s.amount;
            else b.receivedChain += s.amount;
          } else if (s.t === 'refund') {
            const d = decideRefund(b, s.amount);
            if (d.ok) {
              expect(d.amount).toBeLessThanOrEqual(leftOf(b));
              if (s.amount !== null) expect(d.amount).toBe(s.amount);
              if (d.simulated) b.refundedSimulated += d.amount;
              else b.refundedChain += d.amount;
              live.push({ amount: d.amount, simulated: d.simulated });
            } else {
              // refused only when it does not fit: over what is left, or over what one kind of money holds
              expect(d.largest).toBeLessThanOrEqual(d.left);
              if (s.amount !== null && d.reason === 'exceeds') expect(s.amount).toBeGreaterThan(d.left);
              if (d.reason === 'nothing_left') expect(d.left).toBe(0n);
            }
          } else if (live.length > 0) {
            const [r] = live.splice(s.n % live.length, 1);
            if (r!.simulated) b.refundedSimulated -= r!.amount;
            else b.refundedChain -= r!.amount;
          }
          expect(refundedOf(b)).toBeLessThanOrEqual(receivedOf(b));
          expect(b.refundedChain).toBeLessThanOrEqual(b.receivedChain);
          expect(b.refundedSimulated).toBeLessThanOrEqual(b.receivedSimulated);
          expect(refundedOf(b)).toBe(live.reduce((a, r) => a + r.amount, 0n));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('without an amount: the excess of an overpaid session, otherwise everything left', () => {
    const basis = (received: bigint, refunded: bigint): RefundBasis => ({
      expected: 100n,
      receivedChain: received,
      receivedSimulated: 0n,
      refundedChain: refunded,
      refundedSimulated: 0n,
    });
    expect(decideRefund(basis(130n, 0n), null)).toMatchObject({ ok: true, amount: 30n });
    expect(decideRefund(basis(130n, 10n), null)).toMatchObject({ ok: true, amount: 20n });
    expect(decideRefund(basis(130n, 30n), null)).toMatchObject({ ok: true, amount: 100n });
    expect(decideRefund(basis(60n, 0n), null)).toMatchObject({ ok: true, amount: 60n });
    expect(decideRefund(basis(0n, 0n), null)).toMatchObject({ ok: false, reason: 'nothing_received' });
    expect(decideRefund(basis(60n, 60n), null)).toMatchObject({ ok: false, reason: 'nothing_left' });
    // a reorg took back money already refunded: nothing more
    expect(decideRefund(basis(40n, 60n), 1n)).toMatchObject({ ok: false, reason: 'nothing_left', left: 0n });
  });
});

describe('refund acceptance against a real store, concurrently', () => {
  const rails = buildRails({
    ethereum: { testnet: { rpcUrl: '' }, mainnet: { rpcUrl: '' } },
    solana: { testnet: { rpcUrl: '' }, mainnet: { rpcUrl: '' } },
  });
  // a Solana RPC URL that is never dialled: SOL fee quotes need no chain read (one signature, no rent)
  const chains = {
    ethereum: { testnet: { rpcUrl: '', usdcToken: '' }, mainnet: { rpcUrl: '', usdcToken: '' } },
    solana: { testnet: { rpcUrl: 'http://127.0.0.1:9', usdcToken: '' }, mainnet: { rpcUrl: '', usdcToken: '' } },
  } as never;
  const ASSET = 'solana:testnet:SOL';
  const BUYER = '8wmfVcbxU4ENc1jEk5nNfsgN4S4wasfxeeLLod1Gnj5e';
  const merchant = { id: 'mer_prop', sandbox: true };
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'refund-prop-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  type Op =
    | { t: 'refund'; amount: bigint | null; delay: number }
    | { t: 'fail'; n: number; delay: number }
    | { t: 'credit'; amount: bigint; simulated: boolean; delay: number };
  const delay = fc.nat(5);
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({ t: fc.constant('refund' as const), amount: fc.option(fc.bigInt({ min: 1n, max: 600_000_000n })), delay }),
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('fail' as const), n: fc.nat(30), delay }) },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant('credit' as const),
        amount: fc.bigInt({ min: 1n, max: 300_000_000n }),
        simulated: fc.boolean(),
        delay,
      }),
    },
  );

  const deposit = (key: string, amount: bigint, simulated: boolean, at: string): DepositRecord => ({
    key,
    tx_hash: simulated ? null : `sig-${key}`,
    index: 0,
    amount_subunits: amount.toString(),
    token: 'SOL',
    confirmations: 1,
    block_number: null,
    block_hash: null,
    detected_at: at,
    credited_at: at,
    late: false,
    counted: true,
    reverted: false,
    reverted_at: null,
    simulated,
  });

  /** a counted deposit: on the session (compare-and-set) with its settlement, posted (swept) when on chain */
  async function credit(store: Store, wallets: WalletDirectory, sessionId: string, key: string, amount: bigint, simulated: boolean) {
    const wallet = await wallets.defaultWallet(merchant.id, 'solana', 'testnet');
    for (;;) {
      const s = (await store.get<PaymentSessionState>('payment_sessions', sessionId))!;
      const at = new Date().toISOString();
      const next = { ...s, deposits: [...s.deposits, deposit(key, amount, simulated, at)] };
      next.received_subunits = (BigInt(s.received_subunits) + amount).toString();
      const ops: WriteOp[] = [
        { op: 'cas', coll: 'payment_sessions', doc: next, expected: s.version! },
        ...(await settlementOps(store, { depositKey: key, walletId: wallet.id, asset: ASSET, amount, sessionId, simulated })),
      ];
      try {
        await store.write(ops);
        break;
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
    // the sweep confirmed: the money is available in the wallet
    for (; !simulated;) {
      try {
        await store.write(await settlementPostOps(store, key));
        break;
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
  }

  /** what the payout executor writes when a refund fails before it was sent: voided, its amount released */
  async function fail(store: Store, id: string): Promise<void> {
    for (;;) {
      const r = await store.get<RefundDoc>(REFUNDS, id);
      if (!r || r.status !== 'pending') return;
      const now = new Date();
      const b = new LedgerBatch(store, now);
      for (const t of [r.id, `feeres:${r.id}`]) if ((await b.transferDoc(t))?.status === 'pending') await b.void(t);
      const failed: RefundDoc = { ...r, status: 'failed', failure_reason: 'test', fee_subunits: '0', next_attempt_at: null };
      try {
        await store.write([
          { op: 'cas', coll: REFUNDS, doc: failed, expected: r.version! },
          ...b.ops(),
          ...(await refundKind(store).endOps(failed, 0, now)),
        ]);
        return;
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
  }

  it('refunded never exceeds received, whatever the interleaving', async () => {
    let run = 0;
    const seen = { accepted: 0, refused: 0, failed: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), fc.bigInt({ min: 1n, max: 500_000_000n }), async (ops, paid) => {
        const store = new SqliteStore(':memory:');
        await store.ensure(COLLECTIONS);
        try {
          const wallets = openWalletDirectory(store, dataDir, () => new Date());
          const deps: RefundDeps = {
            store,
            rails,
            wallets,
            quoteFee: feeQuoter({ chains }),
            inspect: addressInspector({ chains }),
            now: () => new Date(),
            signal: () => undefined,
          };
          const sessionId = `ps_prop${run++}`;
          const at = new Date().toISOString();
          await store.write([
            {
              op: 'insert',
              coll: 'payment_sessions',
              doc: {
                id: sessionId,
                merchant_id: merchant.id,
                demo: false,
                sandbox: true,
                chain: 'solana',
                network: 'testnet',
                token: 'SOL',
                decimals: 9,
                expected_subunits: '400000000',
                received_subunits: '0',
                status: 'completed',
                deposits: [],
                events: [],
                created_at: at,
              },
            },
          ]);
          // the wallet's own SOL for the network fees (another sale), and the session's payment
          const wallet = await wallets.defaultWallet(merchant.id, 'solana', 'testnet');
          await store.write(await settlementOps(store, { depositKey: 'funding', walletId: wallet.id, asset: ASSET, amount: 10n ** 9n }));
          await store.write(await settlementPostOps(store, 'funding'));
          await credit(store, wallets, sessionId, 'first', paid, false);

          const outcomes = await Promise.all(
            ops.map(async (o, i) => {
              await new Promise((r) => setTimeout(r, o.delay));
              if (o.t === 'credit') return credit(store, wallets, sessionId, `more${i}`, o.amount, o.simulated);
              if (o.t === 'fail') {
                const list = await store.find<RefundDoc>(REFUNDS, { session_id: sessionId });
                return list.length ? fail(store, list[o.n % list.length]!.id) : undefined;
              }
              const body = { destination: BUYER, ...(o.amount === null ? {} : { amount_subunits: o.amount.toString() }) };
              return checkRefund(deps, merchant, sessionId, body)
                .then((c) => acceptRefund(deps, merchant, c))
                .then(() => void seen.accepted++)
                .catch((e) => {
                  // every refusal is a 409 (nothing left, above the rest, a race lost, the wallet short)
                  if (!(e instanceof ServiceError) || e.code !== 409) throw e;
                  seen.refused++;
                });
            }),
          );
          expect(outcomes).toHaveLength(ops.length);

          const session = (await store.get<PaymentSessionState>('payment_sessions', sessionId))!;
          const totals = await store.get<RefundTotalsDoc>(REFUND_TOTALS, sessionId);
          const refunds = await store.find<RefundDoc>(REFUNDS, { session_id: sessionId });
          const live = refunds.filter((r) => r.status !== 'failed');
          const sum = (rs: RefundDoc[]) => rs.reduce((a, r) => a + BigInt(r.amount_subunits), 0n);
          const b = basisOf(session, totals);
          expect(BigInt(totals?.refunded_subunits ?? '0')).toBe(sum(live));
          expect(b.refundedChain).toBe(sum(live.filter((r) => !r.simulated)));
          expect(b.refundedSimulated).toBe(sum(live.filter((r) => r.simulated)));
          expect(refundedOf(b)).toBeLessThanOrEqual(receivedOf(b));
          expect(b.refundedChain).toBeLessThanOrEqual(b.receivedChain);
          expect(b.refundedSimulated).toBeLessThanOrEqual(b.receivedSimulated);
          expect(totals?.count ?? 0).toBe(refunds.length);
          seen.failed += refunds.length - live.length;
          expect(checkLedger(await loadLedger(store))).toMatchObject({ ok: true, problems: [] });
        } finally {
          await store.close();
        }
      }),
      { numRuns: 60 },
    );
    // the runs exercised every outcome
    expect(seen.accepted).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.failed).toBeGreaterThan(0);
  });
});
