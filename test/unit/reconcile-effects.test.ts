/**
 * The pure parts of reconciliation: what an outbox row meant (expectedEffect), where the chain's decoded
 * effect disagrees (compareEffect, including a property: any change to a watched address beyond the
 * intent is reported, and an exact effect never is), the drift's operator line, and the drift alert's
 * payload fields (allowlisted, public shapes only).
 */
import fc from 'fast-check';
import { Interface, Wallet } from 'ethers';
import { Keypair } from '@solana/web3.js';
import { NATIVE, addDelta, compareEffect, expectedEffect, type TxEffect } from '../../lib/treasury/reconcile/effects.ts';
import { driftKey, driftLine, type Drift } from '../../lib/treasury/reconcile/drift.ts';
import { intentAmount, isPlatformAccount } from '../../lib/treasury/reconcile/intent.ts';
import { buildAlertPayload } from '../../lib/ops/alerts/payload.ts';
import { plan } from '../../lib/ops/alerts/rules.ts';
import { loadConfig } from '../../config/index.ts';
import type { ChainTxDoc } from '../../lib/chains/broadcast/types.ts';

const ref = { role: 'wallet' as const, chain: 'ethereum' as const, index: 1 };
const A = Wallet.createRandom().address;
const B = Wallet.createRandom().address;
const G = Wallet.createRandom().address;
const TOKEN = Wallet.createRandom().address;

const row = (
  intent: ChainTxDoc['intent'],
  from: string,
  to: string,
  value?: string,
): Pick<ChainTxDoc, 'chain' | 'intent' | 'from_address' | 'to_address' | 'attempts' | 'tx_hash'> => ({
  chain: intent.chain,
  intent,
  from_address: from,
  to_address: to,
  tx_hash: '0xh',
  attempts: [{ raw: '0x', hash: '0xh', signed_at: '2026-01-01T00:00:00Z', ...(value ? { value } : {}) }],
});

const effect = (fee: bigint, payer: string, moves: Array<[string, string, bigint]>, rent = 0n): TxEffect => {
  const deltas = new Map<string, bigint>();
  addDelta(deltas, payer, NATIVE, -fee - rent);
  for (const [addr, asset, v] of moves) addDelta(deltas, addr, asset, v);
  return { hash: '0xh', block: 1, ok: true, fee, feePayer: payer, deltas, rent };
};

describe('what a row meant against what the chain did', () => {
  it('an ERC-20 payout: exact effect is clean; a different amount or a third watched address is reported', () => {
    const exp = expectedEffect(row({ chain: 'ethereum', kind: 'erc20', from: ref, token: TOKEN, to: B, amount: '5' }, A, B), () => G)!;
    expect(exp.feePayer).toBe(A);
    const exact = effect(7n, A, [
      [A, TOKEN, -5n],
      [B, TOKEN, 5n],
    ]);
    expect(compareEffect(exp, exact, () => false)).toEqual([]);
    const less = effect(7n, A, [
      [A, TOKEN, -5n],
      [B, TOKEN, 4n],
      [G, TOKEN, 1n],
    ]);
    const found = compareEffect(exp, less, (a) => a === G);
    expect(found).toHaveLength(2);
    expect(found).toEqual(
      expect.arrayContaining([
        { address: B, asset: TOKEN, expected: 5n, actual: 4n },
        { address: G, asset: TOKEN, expected: 0n, actual: 1n },
      ]),
    );
  });

  it('a native sweep sends its amount less the fee: the landed attempt says how much', () => {
    const exp = expectedEffect(
      row({ chain: 'ethereum', kind: 'native', from: ref, to: B, value: '100', deduct_fee: true }, A, B, '79'),
      () => G,
    )!;
    expect(
      compareEffect(
        exp,
        effect(21n, A, [
          [A, NATIVE, -79n],
          [B, NATIVE, 79n],
        ]),
        () => true,
      ),
    ).toEqual([]);
    expect(intentAmount(row({ chain: 'ethereum', kind: 'native', from: ref, to: B, value: '100', deduct_fee: true }, A, B, '79'))).toEqual({
      asset: NATIVE,
      value: 79n,
    });
  });

  it('an x402 authorization: the payer → pay_to transfer, the fee on the gas wallet', () => {
    const data = new Interface([
      'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
    ]).encodeFunctionData('transferWithAuthorization', [
      A,
      B,
      1500n,
      0,
      9999999999n,
      `0x${'11'.repeat(32)}`,
      27,
      `0x${'22'.repeat(32)}`,
      `0x${'33'.repeat(32)}`,
    ]);
    const exp = expectedEffect(
      row({ chain: 'ethereum', kind: 'call', from: { ...ref, role: 'gas' }, to: TOKEN, data }, G, TOKEN),
      () => G,
    )!;
    expect(exp.feePayer).toBe(G);
    expect(
      compareEffect(
        exp,
        effect(50n, G, [
          [A, TOKEN, -1500n],
          [B, TOKEN, 1500n],
        ]),
        () => true,
      ),
    ).toEqual([]);
    expect(
      expectedEffect(row({ chain: 'ethereum', kind: 'call', from: ref, to: TOKEN, data: '0x12345678' }, G, TOKEN), () => G),
    ).toBeNull();
  });

  it('Solana SPL: the fee payer may pay rent for the new token account; SOL transfers may not', () => {
    const [w, d, g] = [0, 1, 2].map(() => Keypair.generate().publicKey.toBase58()) as [string, string, string];
    const mint = Keypair.generate().publicKey.toBase58();
    const sref = { role: 'wallet' as const, chain: 'solana' as const, index: 1 };
    const spl = expectedEffect(
      row({ chain: 'solana', kind: 'spl', from: sref, mint, decimals: 6, to: d, amount: '10', fee_payer: { ...sref, role: 'gas' } }, w, d),
      () => g,
    )!;
    expect(
      compareEffect(
        spl,
        effect(
          10_000n,
          g,
          [
            [w, mint, -10n],
            [d, mint, 10n],
          ],
          2_039_280n,
        ),
        () => true,
      ),
    ).toEqual([]);
    const solTransfer = expectedEffect(
      row({ chain: 'solana', kind: 'native', from: sref, to: d, lamports: '10', fee_payer: { ...sref, role: 'gas' } }, w, d),
      () => g,
    )!;
    expect(
      compareEffect(
        solTransfer,
        effect(
          10_000n,
          g,
          [
            [w, NATIVE, -10n],
            [d, NATIVE, 10n],
          ],
          2_039_280n,
        ),
        (a) => a === g,
      ),
    ).toEqual([{ address: g, asset: NATIVE, expected: -10_000n, actual: -2_049_280n }]);
  });

  it('any extra change to a watched address is reported, an exact effect never is (property)', () => {
    const exp = expectedEffect(row({ chain: 'ethereum', kind: 'erc20', from: ref, token: TOKEN, to: B, amount: '5' }, A, B), () => G)!;
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.constantFrom(A, B, G),
        (fee, extra, who) => {
          const e = effect(fee, A, [
            [A, TOKEN, -5n],
            [B, TOKEN, 5n],
          ]);
          expect(compareEffect(exp, e, () => true)).toEqual([]);
          addDelta(e.deltas, who, TOKEN, extra);
          const found = compareEffect(exp, e, () => true);
          if (extra === 0n) expect(found).toEqual([]);
          else expect(found).toEqual([expect.objectContaining({ address: who, asset: TOKEN, actual: (found[0]?.expected ?? 0n) + extra })]);
        },
      ),
    );
  });
});

describe('platform accounts', () => {
  it('the gas wallet and fees are the platform; the chain, payouts and simulation are not', () => {
    expect(isPlatformAccount('acc:sys:gas:ethereum:testnet:ETH')).toBe(true);
    expect(isPlatformAccount('acc:sys:fees:solana:testnet:SOL')).toBe(true);
    for (const o of ['sys:chain', 'sys:payouts', 'sys:simulated', 'wal_01abcdef'])
      expect(isPlatformAccount(`acc:${o}:ethereum:testnet:ETH`)).toBe(false);
  });
});

describe('a drift for operators and alerts', () => {
  const d: Drift = {
    check: 'platform',
    code: 'unbooked_platform_cost',
    chain: 'solana',
    network: 'testnet',
    row: 'payout:po_01m89nyvav86wbsz5z3s1t47hp',
    address: 'CgJtCVvQgcEDtaLe4JSZGDMBpr1bt8kEySYBa3ta2t67',
    asset: 'solana:testnet:SOL',
    difference: '-2039280',
    message: 'the gas wallet spent more than booked',
  };

  it('one line naming row, address, asset and difference', () => {
    expect(driftLine(d)).toBe(
      'DRIFT platform unbooked_platform_cost row=payout:po_01m89nyvav86wbsz5z3s1t47hp address=CgJtCVvQgcEDtaLe4JSZGDMBpr1bt8kEySYBa3ta2t67 asset=solana:testnet:SOL difference=-2039280: the gas wallet spent more than booked',
    );
  });

  it('one alert per row, address and asset; any drift raises it', () => {
    const p = plan({ kind: 'drift', key: driftKey(d) }, loadConfig({}).alerts);
    expect(p.checks).toEqual([expect.objectContaining({ type: 'reconciliation_drift', key: driftKey(d), threshold: 0 })]);
    expect(driftKey({ ...d, row: 'payout:po_other' })).not.toBe(driftKey(d));
  });

  it('the payload carries row, address, asset and difference, and nothing shaped otherwise', () => {
    const base = {
      alert_id: 'alt_1',
      alert_type: 'reconciliation_drift' as const,
      severity: 'P1' as const,
      window_start: 'a',
      window_end: 'b',
      count: 1,
      threshold: 0,
    };
    const p = buildAlertPayload(base, {
      row: d.row,
      address: d.address,
      asset: d.asset,
      difference: d.difference,
      chain: 'solana',
      network: 'testnet',
    });
    expect(p).toMatchObject({ row: d.row, address: d.address, asset: d.asset, difference: d.difference, redacted_fields: [] });
    const eth = buildAlertPayload(base, { address: A, difference: '-154667672001853' });
    expect(eth).toMatchObject({ address: A, difference: '-154667672001853' });
    const secret = `0x${'ab'.repeat(32)}`;
    const bad = buildAlertPayload(base, {
      row: 'service_sk_test_abcdefghijklmnopqrstuvwxyz012345',
      address: secret,
      asset: secret,
      difference: '1.5',
    });
    expect(bad).toMatchObject({ row: null, address: null, asset: null, difference: null });
    expect(bad.redacted_fields).toEqual(['address', 'asset', 'difference', 'row']);
    expect(JSON.stringify(bad)).not.toContain('ab'.repeat(32));
  });
});
