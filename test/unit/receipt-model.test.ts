/** The receipt's content rules: exact fiat value, marks, who has a receipt (pure, no broker). */
import fc from 'fast-check';
import { fiatValue, receiptData, NoReceiptError } from '../../lib/receipts/model.ts';
import type { DepositRecord, PaymentSessionState } from '../../lib/sessions/payment-session.ts';

const dep = (over: Partial<DepositRecord>): DepositRecord => ({
  key: 'k',
  tx_hash: '0xaa',
  index: 0,
  amount_subunits: '1',
  token: 'USDC',
  confirmations: 1,
  block_number: 1,
  block_hash: null,
  detected_at: '2026-01-01T00:00:00.000Z',
  credited_at: '2026-01-01T00:00:01.000Z',
  late: false,
  counted: true,
  reverted: false,
  reverted_at: null,
  simulated: false,
  ...over,
});
const session = (over: Partial<PaymentSessionState>): PaymentSessionState => ({
  id: 'ps_x',
  merchant_id: 'mer_x',
  demo: false,
  sandbox: true,
  environment: 'sandbox',
  method_id: 0,
  chain: 'ethereum',
  network: 'testnet',
  token: 'USDC',
  decimals: 6,
  expected_subunits: '1000000',
  received_subunits: '0',
  address: '0xabc',
  address_index: 0,
  key_fingerprint: 'f',
  status: 'pending',
  metadata: {},
  expires_at: '2026-01-01T01:00:00.000Z',
  expiry_due_at: null,
  completed_at: null,
  expired_at: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  deposits: [],
  events: [],
  ...over,
});

describe('fiatValue', () => {
  it('multiplies exactly and rounds half up to cents', () => {
    expect(fiatValue('1500000', 6, '0.9999')).toBe('1.50');
    expect(fiatValue('1005000', 6, '1')).toBe('1.01');
    expect(fiatValue('1004999', 6, '1')).toBe('1.00');
    expect(fiatValue('1000000000000000000', 18, '3456.78912345')).toBe('3456.79');
    expect(fiatValue('1', 18, '3000')).toBe('0.00');
    expect(fiatValue('123456789', 9, '150')).toBe('18.52');
  });

  it('equals the rounded exact rational for any amount and rate (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.integer({ min: 0, max: 18 }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 8 }),
        (units, decimals, rateUnits, rateDecimals) => {
          const s = rateUnits.toString().padStart(rateDecimals + 1, '0');
          const rate = rateDecimals ? `${s.slice(0, -rateDecimals)}.${s.slice(-rateDecimals)}` : s;
          // exact: units × rateUnits / 10^(decimals + rateDecimals), in cents, half up
          const num = units * rateUnits * 100n;
          const den = 10n ** BigInt(decimals + rateDecimals);
          const cents = (2n * num + den) / (2n * den);
          const want = `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
          expect(fiatValue(units.toString(), decimals, rate)).toBe(want);
        },
      ),
    );
  });
});

describe('receiptData', () => {
  it('refuses a session that received nothing (reverted or foreign-token deposits do not count)', () => {
    expect(() => receiptData(session({}), 'Shop')).toThrow(NoReceiptError);
    expect(() => receiptData(session({ deposits: [dep({ reverted: true }), dep({ counted: false })] }), 'Shop')).toThrow(NoReceiptError);
  });

  it('lists counted deposits only, with marks and exact amounts', () => {
    const r = receiptData(
      session({
        status: 'expired',
        received_subunits: '1000001',
        expired_at: '2026-01-01T01:00:00.000Z',
        deposits: [
          dep({ amount_subunits: '1000001', late: true, credited_at: '2026-01-01T02:00:00.000Z' }),
          dep({ key: 'x', counted: false, tx_hash: '0xbb' }),
        ],
      }),
      'Shop',
    );
    expect(r.marks).toEqual(['OVERPAID by 0.000001 USDC', 'LATE: money arrived after the session expired']);
    expect(r.received_amount).toBe('1.000001');
    expect(r.deposits).toHaveLength(1);
    expect(r.issued_iso).toBe('2026-01-01T02:00:00.000Z');
    expect(r.issued_at).toBe('2026-01-01 02:00:00 UTC');
    expect(r.fiat).toBeNull();
  });

  it('values the received amount at the recorded completion rate', () => {
    const r = receiptData(
      session({
        status: 'completed',
        received_subunits: '2500000',
        expected_subunits: '2500000',
        completed_at: '2026-01-01T00:05:00.000Z',
        deposits: [dep({ amount_subunits: '2500000' })],
        completion_rate: { base: 'USDC', quote: 'USD', rate: '0.99985', source: 'chainlink', as_of: '2026-01-01T00:04:00.000Z' },
      } as Partial<PaymentSessionState>),
      'Shop',
    );
    expect(r.fiat).toEqual({
      quote: 'USD',
      rate: '0.99985',
      value: '2.50',
      source: 'chainlink',
      as_of: '2026-01-01 00:04:00 UTC',
      stale: false,
    });
    expect(r.marks).toEqual([]);
  });

  it('lists the refunds not failed, oldest first, with their sum', () => {
    const refund = (id: string, amount: string, status: string, created_at: string) => ({
      id,
      amount_subunits: amount,
      status,
      destination: '0x000000000000000000000000000000000000dEaD',
      tx_hash: null,
      created_at,
      completed_at: null,
      simulated: false,
    });
    const r = receiptData(
      session({ received_subunits: '2500000', expected_subunits: '2500000', deposits: [dep({ amount_subunits: '2500000' })] }),
      'Shop',
      '',
      [
        refund('re_b', '500000', 'pending', '2026-01-01T00:07:00.000Z'),
        refund('re_x', '2000000', 'failed', '2026-01-01T00:06:30.000Z'),
        refund('re_a', '1000000', 'completed', '2026-01-01T00:06:00.000Z'),
      ],
    );
    expect(r.refunds.map((x) => [x.id, x.amount, x.status])).toEqual([
      ['re_a', '1', 'completed'],
      ['re_b', '0.5', 'pending'],
    ]);
    expect(r.refunded_amount).toBe('1.5');
    expect(r.marks).toContain('REFUNDED: 1.5 USDC');
  });
});
