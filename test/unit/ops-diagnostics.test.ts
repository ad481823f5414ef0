/** Pure diagnostics rules (lib/ops/diagnostics.ts). */
import fc from 'fast-check';
import { diagnose, units, type DiagnosticsInput } from '../../lib/ops/diagnostics.ts';

const now = new Date('2026-01-01T12:00:00Z');
const base = (over: Partial<DiagnosticsInput['session']> = {}, rest: Partial<DiagnosticsInput> = {}): DiagnosticsInput => ({
  session: {
    id: 'ps_1',
    status: 'pending',
    chain: 'ethereum',
    network: 'testnet',
    token: 'USDC',
    decimals: 6,
    expected_subunits: '10000000',
    received_subunits: '0',
    expires_at: '2026-01-01T13:00:00Z',
    deposits: [],
    ...over,
  },
  now,
  recorded: [],
  unconfirmed: [],
  requiredConfirmations: 3,
  listener: { configured: true, leaseHeld: true, lastProgressAt: '2026-01-01T11:59:50Z', behindBlocks: 0 },
  webhooks: [],
  ...rest,
});

describe('diagnose', () => {
  it('says nothing about a healthy open session', () => {
    expect(diagnose(base())).toEqual([]);
  });

  it('formats amounts exactly', () => {
    expect(units('1', 6)).toBe('0.000001');
    expect(units('12500000', 6)).toBe('12.5');
    expect(units('1000000000000000000', 18)).toBe('1');
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (v, d) => {
        const [w, f = ''] = units(v, d).split('.');
        expect(BigInt(w + f.padEnd(d, '0'))).toBe(v);
      }),
    );
  });

  it('separates confirmation lag from a stuck payment by age', () => {
    const t = { tx_hash: '0xabc', token: 'USDC', amount_subunits: '5000000', confirmations: 1, block_time: '2026-01-01T11:58:00Z' };
    expect(diagnose(base({}, { unconfirmed: [t] })).map((f) => f.code)).toEqual(['confirmation_lag']);
    expect(diagnose(base({}, { unconfirmed: [{ ...t, block_time: '2026-01-01T11:30:00Z' }] })).map((f) => f.code)).toEqual([
      'stuck_unconfirmed',
    ]);
  });

  it('reports a lagging, stopped or unconfigured listener only for open sessions', () => {
    const stale = { configured: true, leaseHeld: true, lastProgressAt: '2026-01-01T11:50:00Z', behindBlocks: 0 };
    expect(diagnose(base({}, { listener: stale })).map((f) => f.code)).toEqual(['listener_lag']);
    expect(diagnose(base({}, { listener: { ...stale, lastProgressAt: null, behindBlocks: 21 } })).map((f) => f.code)).toEqual([
      'listener_lag',
    ]);
    expect(diagnose(base({}, { listener: { ...stale, lastProgressAt: null, behindBlocks: 20 } }))).toEqual([]);
    expect(diagnose(base({ status: 'completed', received_subunits: '10000000' }, { listener: { ...stale, leaseHeld: false } }))).toEqual(
      [],
    );
  });

  it('a delivered webhook after failures is fine; a failing one is reported', () => {
    const attempts = [{ status: 500, error: 'http_error', at: 'x' }];
    expect(
      diagnose(
        base({}, { webhooks: [{ event_type: 'payment_session.completed', status: 'pending', attempts, next_attempt_at: 'y' }] }),
      ).map((f) => f.code),
    ).toEqual(['webhook_failing']);
    expect(
      diagnose(
        base(
          {},
          {
            webhooks: [
              {
                event_type: 'payment_session.completed',
                status: 'delivered',
                attempts: [...attempts, { status: 200, error: null, at: 'z' }],
                next_attempt_at: null,
              },
            ],
          },
        ),
      ),
    ).toEqual([]);
  });

  it('an expired session with a late payment is paid_after_expiry, not expired_unpaid', () => {
    const late = {
      tx_hash: '0x1',
      token: 'USDC',
      amount_subunits: '1000000',
      counted: true,
      late: true,
      reverted: false,
      simulated: false,
    };
    const codes = diagnose(base({ status: 'expired', received_subunits: '1000000', deposits: [late] })).map((f) => f.code);
    expect(codes).toContain('paid_after_expiry');
    expect(codes).not.toContain('expired_unpaid');
  });
});
