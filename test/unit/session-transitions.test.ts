/**
 * The payment-session transition table (ALLOWED in lib/sessions/payment-session.ts) against the decisions:
 * random message sequences never make a move outside the table, every edge of the table is reachable,
 * and expired is final.
 */
import fc from 'fast-check';
import {
  ALLOWED,
  SESSION_STATUSES,
  decideSession,
  type PaymentSessionState,
  type SessionMsg,
  type SessionStatus,
} from '../../lib/sessions/payment-session.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const MIN = 60_000;
const at = (ms: number) => new Date(T0 + ms);

function created(demo = false): PaymentSessionState {
  const s = {
    id: 'ps_t',
    merchant_id: demo ? 'demo' : 'mer_a',
    demo,
    sandbox: true,
    environment: demo ? 'demo' : 'sandbox',
    method_id: 0,
    chain: 'ethereum',
    network: 'testnet',
    token: 'USDC',
    decimals: 6,
    expected_subunits: '10000000',
    received_subunits: '0',
    address: '0xabc',
    address_index: 0,
    key_fingerprint: 'f',
    status: 'pending',
    metadata: {},
    expires_at: at(15 * MIN).toISOString(),
    expiry_due_at: null,
    completed_at: null,
    expired_at: null,
    created_at: at(0).toISOString(),
    updated_at: at(0).toISOString(),
    deposits: [],
    events: [],
  } as PaymentSessionState;
  return decideSession(null, { type: 'create', session: s }, at(0)).state!;
}

const credit = (key: string, amount: bigint, detectedMs: number, token = 'USDC'): SessionMsg => ({
  type: 'credit',
  deposit: {
    key,
    tx_hash: `0x${key}`,
    index: 0,
    amount_subunits: amount.toString(),
    token,
    confirmations: 1,
    detected_at: at(detectedMs).toISOString(),
  },
});

/** Applies [message, time] steps like the actor host; returns every status move made. */
function moves(steps: Array<[SessionMsg, number]>, demo = false): Array<[SessionStatus, SessionStatus]> {
  let state = created(demo);
  const out: Array<[SessionStatus, SessionStatus]> = [];
  for (const [msg, ms] of steps) {
    const before = state.status;
    const d = decideSession(structuredClone(state), msg, at(ms));
    if (d.state) state = d.state;
    if (state.status !== before) out.push([before, state.status]);
  }
  return out;
}

const message: fc.Arbitrary<[SessionMsg, number]> = fc.tuple(
  fc.oneof(
    fc
      .record({
        key: fc.constantFrom('a', 'b', 'c', 'd'),
        amount: fc.bigInt({ min: 1n, max: 15_000_000n }),
        detected: fc.integer({ min: 0, max: 30 }),
        token: fc.constantFrom('USDC', 'USDC', 'ETH'),
      })
      .map(({ key, amount, detected, token }) => credit(key, amount, detected * MIN, token)),
    fc.constantFrom('a', 'b', 'c', 'd').map((key): SessionMsg => ({ type: 'revert', key })),
    fc.constant<SessionMsg>({ type: 'expire' }),
    fc.constantFrom<SessionMsg>({ type: 'simulate', caller_merchant_id: 'mer_a' }, { type: 'simulate', caller_merchant_id: null }),
  ),
  fc.integer({ min: 0, max: 30 }).map((m) => m * MIN),
);

describe('session transition table', () => {
  it('names every status, and expired is final', () => {
    expect(SESSION_STATUSES.sort()).toEqual(['completed', 'expired', 'partial_paid', 'pending']);
    for (const s of SESSION_STATUSES) for (const next of ALLOWED[s]) expect(SESSION_STATUSES).toContain(next);
    expect(ALLOWED.expired).toEqual([]);
  });

  it('random message sequences only make moves in the table', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 12 }).map((steps) => steps.sort((x, y) => x[1] - y[1])),
        fc.boolean(),
        (steps, demo) => {
          for (const [from, to] of moves(steps, demo)) expect(ALLOWED[from]).toContain(to);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('every edge of the table is reachable', () => {
    const paths: Record<string, Array<[SessionMsg, number]>> = {
      'pending>partial_paid': [[credit('a', 4_000_000n, MIN), MIN]],
      'pending>completed': [[credit('a', 10_000_000n, MIN), MIN]],
      'pending>expired': [[{ type: 'expire' }, 16 * MIN]],
      'partial_paid>completed': [
        [credit('a', 4_000_000n, MIN), MIN],
        [credit('b', 6_000_000n, 2 * MIN), 2 * MIN],
      ],
      'partial_paid>expired': [
        [credit('a', 4_000_000n, MIN), MIN],
        [{ type: 'expire' }, 16 * MIN],
      ],
      'partial_paid>pending': [
        [credit('a', 4_000_000n, MIN), MIN],
        [{ type: 'revert', key: 'a' }, 2 * MIN],
      ],
      'completed>partial_paid': [
        [credit('a', 4_000_000n, MIN), MIN],
        [credit('b', 6_000_000n, 2 * MIN), 2 * MIN],
        [{ type: 'revert', key: 'b' }, 3 * MIN],
      ],
      'completed>pending': [
        [credit('a', 10_000_000n, MIN), MIN],
        [{ type: 'revert', key: 'a' }, 2 * MIN],
      ],
      'completed>expired': [
        [credit('a', 10_000_000n, MIN), MIN],
        [{ type: 'revert', key: 'a' }, 16 * MIN],
      ],
    };
    const edges = SESSION_STATUSES.flatMap((from) => ALLOWED[from].map((to) => `${from}>${to}`));
    expect(Object.keys(paths).sort()).toEqual(edges.sort());
    for (const [edge, steps] of Object.entries(paths)) {
      const made = moves(steps).map(([f, t]) => `${f}>${t}`);
      expect(made).toContain(edge);
    }
  });
});
