/**
 * Benchmark: ledger transfers per second on the embedded store (SQLite file, WAL), against two bare
 * baselines in the same run, raw `store.write` calls with no reads, no balance rule and no
 * compare-and-set:
 *  - the same rows: the very documents the ledger writes for the same transfers (a transfer and two
 *    accounts: the transfer is its wallet's history, lib/ledger/wallet-history.ts; made beforehand on a
 *    scratch store, untimed), inserted and upserted;
 *  - skeletal rows: the same three rows by collection and id, with a few fields each (the baseline of the
 *    earlier numbers: cheaper to write than the real ones, which carry every field and reference).
 *
 * 1. sequential: one transfer at a time (sys:chain → one of 100 wallets, then wallet → sys:payouts), each
 *    built with `transferOps` (two account reads, the no_negative check) and committed; it and the
 *    baseline alternate in ten rounds, so that both are measured at the same moments;
 * 2. contended: 8 concurrent writers paying out of 4 wallets, committed with `commitWithRetry` (lost
 *    compare-and-set races re-read and retry);
 * then `ledger:check` over everything written (and its time).
 * Usage: npm run bench:ledger -- [--transfers 5000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../lib/store/index.ts';
import type { WriteOp } from '../lib/store/port.ts';
import { accountId, checkStoredLedger, commitWithRetry, transferOps, walletAccount, type TransferSpec } from '../lib/ledger/index.ts';
import { arg } from './bench-lib.ts';

const N = arg('transfers', 5000);
const ASSET = 'ethereum:testnet:USDC';
const dir = mkdtempSync(join(tmpdir(), 'bench-ledger-'));
const store = await openStore(`sqlite:${join(dir, 'bench.db')}`);
// the baseline writes into its own file of the same kind, so the ledger check sees only ledger rows
const bare = await openStore(`sqlite:${join(dir, 'baseline.db')}`);
const same = await openStore(`sqlite:${join(dir, 'same-rows.db')}`);
// where the same-rows baseline's documents are made (the ledger's own work, untimed)
const scratch = await openStore('sqlite::memory:');

async function timed(label: string, n: number, run: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await run();
  const s = (performance.now() - t0) / 1000;
  const rate = n / s;
  console.log(`${label.padEnd(44)} ${n} in ${s.toFixed(2)} s  ${rate.toFixed(0)}/s`);
  return rate;
}

// baseline: the same number of writes with the same row count, blind inserts and upserts
const baselineWrite = (i: number) =>
  bare.write([
    { op: 'insert', coll: 'ledger_transfers', doc: { id: `base:${i}`, amount: '1', status: 'posted', kind: 'deposit' } },
    { op: 'upsert', coll: 'ledger_accounts', doc: { id: `base:a:${i % 100}`, owner: `base_${i % 100}`, credits_posted: String(i) } },
    { op: 'upsert', coll: 'ledger_accounts', doc: { id: 'base:sys', owner: 'base_sys', debits_posted: String(i) } },
  ]);

const wallets = Array.from({ length: 100 }, (_, i) => `wal_bench${String(i).padStart(3, '0')}`);
const specOf = (i: number): TransferSpec => {
  const w = wallets[i % wallets.length];
  const spec =
    i % 2 === 0
      ? {
          id: `dep:${i}`,
          kind: 'deposit' as const,
          debit_account: accountId('sys:chain', ASSET),
          credit_account: walletAccount(w, ASSET),
        }
      : {
          id: `po:${i}`,
          kind: 'payout' as const,
          debit_account: walletAccount(wallets[(i - 1) % wallets.length], ASSET),
          credit_account: accountId('sys:payouts', ASSET),
        };
  return { ...spec, asset: ASSET, amount: '1000000' };
};
const ledgerWrite = async (i: number) => {
  const ops = await transferOps(store, specOf(i));
  await store.write(ops);
};
/**
 * the ledger's rows of transfer i as blind writes: inserts, and upserts of the accounts as the ledger's
 * write leaves them (a credit is an `add` of amounts: its row is read back from the scratch store)
 */
const sameRows = async (i: number): Promise<WriteOp[]> => {
  const ops = await transferOps(scratch, specOf(i));
  await scratch.write(ops);
  const raw: WriteOp[] = [];
  for (const o of ops) {
    if (o.op === 'delete') throw new Error('unexpected delete');
    if (o.coll !== 'ledger_accounts') raw.push({ op: 'insert', coll: o.coll, doc: { ...o.doc } });
    else {
      const { version: _v, ...doc } = (await scratch.get(o.coll, o.doc.id))!;
      raw.push({ op: 'upsert', coll: o.coll, doc });
    }
  }
  return raw;
};

// a warm-up of every path first, untimed (its own ids): the first transfers ran before the JIT had compiled
// the ledger's code, which has more of it than a raw write, so a short run (bench:agents runs 3,000)
// measured the compiler rather than the ledger (0.62-0.71 x at 3,000 against 0.80-0.83 x at 20,000)
const WARM = Math.min(1000, N);
for (let i = 0; i < WARM; i++) {
  const w = N + i;
  await baselineWrite(w);
  await same.write(await sameRows(w));
  await ledgerWrite(w);
}

// the two alternate in rounds, so that both meet the same moment of a shared machine and of SQLite's
// WAL (its checkpoints land on whichever commit crosses the threshold)
const ROUNDS = 10;
let baseSeconds = 0;
let sameSeconds = 0;
let ledgerSeconds = 0;
for (let r = 0; r < ROUNDS; r++) {
  const from = Math.floor((r * N) / ROUNDS);
  const to = Math.floor(((r + 1) * N) / ROUNDS);
  const rows: WriteOp[][] = [];
  for (let i = from; i < to; i++) rows.push(await sameRows(i));
  let t0 = performance.now();
  for (let i = from; i < to; i++) await baselineWrite(i);
  baseSeconds += (performance.now() - t0) / 1000;
  t0 = performance.now();
  for (const ops of rows) await same.write(ops);
  sameSeconds += (performance.now() - t0) / 1000;
  t0 = performance.now();
  for (let i = from; i < to; i++) await ledgerWrite(i);
  ledgerSeconds += (performance.now() - t0) / 1000;
}
const baseline = N / baseSeconds;
const sameRate = N / sameSeconds;
const sequential = N / ledgerSeconds;
console.log(`${'baseline: raw store.write (3 rows each)'.padEnd(44)} ${N} in ${baseSeconds.toFixed(2)} s  ${baseline.toFixed(0)}/s`);
console.log(`${"baseline: the ledger's own rows, raw".padEnd(44)} ${N} in ${sameSeconds.toFixed(2)} s  ${sameRate.toFixed(0)}/s`);
console.log(`${'ledger: transferOps + write, sequential'.padEnd(44)} ${N} in ${ledgerSeconds.toFixed(2)} s  ${sequential.toFixed(0)}/s`);

// contended: fund 4 wallets, then 8 writers pay out of them at once
const hot = wallets.slice(0, 4);
for (const w of hot)
  await store.write(
    await transferOps(store, {
      id: `fund:${w}`,
      kind: 'deposit',
      asset: ASSET,
      amount: String(10n ** 15n),
      debit_account: accountId('sys:chain', ASSET),
      credit_account: walletAccount(w, ASSET),
    }),
  );
let next = 0;
const contended = await timed('ledger: 8 writers on 4 wallets, with retry', N, async () => {
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < N) {
        const i = next++;
        await commitWithRetry(
          store,
          () =>
            transferOps(store, {
              id: `hot:${i}`,
              kind: 'payout',
              asset: ASSET,
              amount: '1',
              debit_account: walletAccount(hot[i % hot.length], ASSET),
              credit_account: accountId('sys:payouts', ASSET),
            }),
          { attempts: 1000 },
        );
      }
    }),
  );
});

const t0 = performance.now();
const report = await checkStoredLedger(store);
const checkMs = performance.now() - t0;
console.log(
  `ledger:check over ${report.counts.transfers} transfers: ${report.ok ? 'ok' : report.problems.join('; ')} in ${checkMs.toFixed(0)} ms`,
);
console.log(
  `ratio sequential/same rows ${(sequential / sameRate).toFixed(2)}, contended/same rows ${(contended / sameRate).toFixed(2)};` +
    ` sequential/baseline ${(sequential / baseline).toFixed(2)}, contended/baseline ${(contended / baseline).toFixed(2)}`,
);
await store.close();
await bare.close();
await same.close();
await scratch.close();
rmSync(dir, { recursive: true, force: true });
