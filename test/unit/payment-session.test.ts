import fc from 'fast-check';
import {
  decideSession,
  receivedOf,
  type DepositInput,
  type PaymentSessionState,
  type SessionMsg,
  type SessionReply,
  type SessionStatus,
} from '../../lib/sessions/payment-session.ts';
import type { Decision } from '../../lib/core/actor.ts';
import type { WebhookEventDoc } from '../../lib/webhooks/event.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const MIN = 60_000;

function session(over: Partial<PaymentSessionState> = {}): PaymentSessionState {
  return {
    id: 'ps_test',
    merchant_id: 'mer_a',
    demo: false,
    sandbox: true,
    environment: 'sandbox',
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
    ...over,
  };
}

function dep(key: string, amount: string, over: Partial<DepositInput> = {}): DepositInput {
  return {
    key,
    tx_hash: `0x${key}`,
    index: 0,
    amount_subunits: amount,
    token: 'USDC',
    confirmations: 3,
    detected_at: at(MIN).toISOString(),
    ...over,
  };
}

type D = Decision<PaymentSessionState, SessionReply>;
const eventsOf = (d: D) =>
  (d.effects ?? [])
    .filter((e) => e.op === 'insert' && e.coll === 'webhook_events')
    .map((e) => (e as unknown as { doc: WebhookEventDoc }).doc);
const typesOf = (d: D) => eventsOf(d).map((e) => e.event_type);

/** Runs messages in order like the actor host does (a decision without a state changes nothing). */
function run(initial: PaymentSessionState, steps: Array<[SessionMsg, number]>): { state: PaymentSessionState; decisions: D[] } {
  let state = decideSession(null, { type: 'create', session: initial }, at(0)).state!;
  const decisions: D[] = [];
  for (const [msg, ms] of steps) {
    const d = decideSession(structuredClone(state), msg, at(ms));
    decisions.push(d);
    if (d.state) state = d.state;
  }
  return { state, decisions };
}

describe('payment session transitions', () => {
  it('create starts pending with the expiry as the scanner due time; a repeated create changes nothing', () => {
    const d = decideSession(null, { type: 'create', session: session({ status: 'completed', received_subunits: '5' }) }, at(0));
    expect(d.state).toMatchObject({ status: 'pending', received_subunits: '0', expiry_due_at: at(15 * MIN).toISOString(), deposits: [] });
    const again = decideSession(d.state!, { type: 'create', session: session() }, at(1));
    expect(again.state).toBeUndefined();
    expect(again.reply.changed).toBe(false);
  });

  it('partial, then enough: partial_paid once, completed once; overpayment kept', () => {
    const { state, decisions } = run(session(), [
      [{ type: 'credit', deposit: dep('a', '4000000') }, MIN],
      [{ type: 'credit', deposit: dep('b', '1000000') }, 2 * MIN],
      [{ type: 'credit', deposit: dep('c', '7000000') }, 3 * MIN],
    ]);
    expect(decisions.map(typesOf)).toEqual([['payment_session.partial_paid'], [], ['payment_session.completed']]);
    expect(state).toMatchObject({
      status: 'completed',
      received_subunits: '12000000',
      expiry_due_at: null,
      completed_at: at(3 * MIN).toISOString(),
    });
    const [evt] = eventsOf(decisions[2]);
    expect(evt.body).toMatchObject({
      event_type: 'payment_session.completed',
      session_id: 'ps_test',
      status: 'completed',
      amount: 10,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
    });
    expect(state.events.map((e) => e.id)).toEqual([...eventsOf(decisions[0]), ...eventsOf(decisions[2])].map((e) => e.id));
    expect(decisions[2].reply.events).toEqual([evt.id]);
  });

  it('a deposit key is counted once', () => {
    const { state, decisions } = run(session(), [
      [{ type: 'credit', deposit: dep('a', '4000000') }, MIN],
      [{ type: 'credit', deposit: dep('a', '4000000', { confirmations: 9 }) }, 2 * MIN],
    ]);
    expect(decisions[1].state).toBeUndefined();
    expect(decisions[1].reply.credit).toBe('duplicate');
    expect(state.received_subunits).toBe('4000000');
  });

  it('expire is a no-op before expires_at and on a terminal session', () => {
    const early = run(session(), [[{ type: 'expire' }, 14 * MIN]]);
    expect(early.decisions[0].state).toBeUndefined();
    const done = run(session(), [
      [{ type: 'credit', deposit: dep('a', '10000000') }, MIN],
      [{ type: 'expire' }, 20 * MIN],
    ]);
    expect(done.decisions[1].state).toBeUndefined();
    expect(done.state.status).toBe('completed');
  });

  it('expires at expires_at with one expired event, from pending or partial_paid', () => {
    const p = run(session(), [
      [{ type: 'expire' }, 15 * MIN],
      [{ type: 'expire' }, 16 * MIN],
    ]);
    expect(p.decisions.map(typesOf)).toEqual([['payment_session.expired'], []]);
    expect(p.state).toMatchObject({ status: 'expired', expiry_due_at: null, expired_at: at(15 * MIN).toISOString() });
    const pp = run(session(), [
      [{ type: 'credit', deposit: dep('a', '1') }, MIN],
      [{ type: 'expire' }, 20 * MIN],
    ]);
    expect(pp.decisions.map(typesOf)).toEqual([['payment_session.partial_paid'], ['payment_session.expired']]);
  });

  it('a deposit after expiry is recorded late, counted, and does not reopen the session', () => {
    const { state, decisions } = run(session(), [
      [{ type: 'expire' }, 16 * MIN],
      [{ type: 'credit', deposit: dep('a', '10000000', { detected_at: at(17 * MIN).toISOString() }) }, 18 * MIN],
    ]);
    expect(typesOf(decisions[1])).toEqual([]);
    expect(decisions[1].reply.credit).toBe('late');
    expect(state.status).toBe('expired');
    expect(state.received_subunits).toBe('10000000');
    expect(state.deposits[0]).toMatchObject({ late: true, counted: true, tx_hash: '0xa' });
  });

  it('a deposit detected after the deadline expires an open session first (scanner not there yet)', () => {
    const { state, decisions } = run(session(), [
      [{ type: 'credit', deposit: dep('a', '10000000', { detected_at: at(15 * MIN).toISOString() }) }, 16 * MIN],
    ]);
    expect(typesOf(decisions[0])).toEqual(['payment_session.expired']);
    expect(state).toMatchObject({ status: 'expired', received_subunits: '10000000' });
    expect(state.deposits[0].late).toBe(true);
  });

  it('a deposit detected before the deadline counts even when credited after it', () => {
    const full = run(session(), [
      [{ type: 'credit', deposit: dep('a', '10000000', { detected_at: at(14 * MIN).toISOString() }) }, 16 * MIN],
    ]);
    expect(full.state.status).toBe('completed');
    const part = run(session(), [[{ type: 'credit', deposit: dep('a', '1', { detected_at: at(14 * MIN).toISOString() }) }, 16 * MIN]]);
    expect(typesOf(part.decisions[0])).toEqual(['payment_session.partial_paid', 'payment_session.expired']);
    expect(part.state.status).toBe('expired');
  });

  it('a deposit in another token is recorded but never summed', () => {
    const { state, decisions } = run(session(), [[{ type: 'credit', deposit: dep('a', '10000000', { token: 'ETH' }) }, MIN]]);
    expect(decisions[0].reply.credit).toBe('ignored');
    expect(state).toMatchObject({ status: 'pending', received_subunits: '0' });
    expect(state.deposits[0].counted).toBe(false);
  });

  describe('revert (reorg)', () => {
    it('reopens a completed session before expiry (partial_paid event) and completes it again on re-credit', () => {
      const { state, decisions } = run(session(), [
        [{ type: 'credit', deposit: dep('a', '4000000') }, MIN],
        [{ type: 'credit', deposit: dep('b', '6000000') }, 2 * MIN],
        [{ type: 'revert', key: 'b' }, 3 * MIN],
        [{ type: 'credit', deposit: dep('b', '6000000', { block_number: 99 }) }, 4 * MIN],
      ]);
      expect(decisions.map(typesOf)).toEqual([
        // completed once: the re-completion keeps the first event (a merchant deduplicating on its id fulfils once)
        ['payment_session.partial_paid'],
        ['payment_session.completed'],
        ['payment_session.partial_paid'],
        [],
      ]);
      expect(decisions[2].state).toMatchObject({
        status: 'partial_paid',
        received_subunits: '4000000',
        completed_at: null,
        expiry_due_at: at(15 * MIN).toISOString(),
      });
      expect(state).toMatchObject({ status: 'completed', received_subunits: '10000000' });
      expect(state.deposits.filter((x) => x.key === 'b')).toHaveLength(1);
    });

    it('expires a completed session whose money is gone after its deadline', () => {
      const { state, decisions } = run(session(), [
        [{ type: 'credit', deposit: dep('a', '10000000') }, MIN],
        [{ type: 'revert', key: 'a' }, 20 * MIN],
      ]);
      expect(typesOf(decisions[1])).toEqual(['payment_session.expired']);
      expect(state).toMatchObject({ status: 'expired', received_subunits: '0' });
      expect(state.deposits[0].reverted).toBe(true);
    });

    it('keeps a completed session completed when the rest still covers it; unknown keys change nothing', () => {
      const { state, decisions } = run(session(), [
        [{ type: 'credit', deposit: dep('a', '10000000') }, MIN],
        [{ type: 'credit', deposit: dep('b', '3000000') }, 2 * MIN],
        [{ type: 'revert', key: 'b' }, 3 * MIN],
        [{ type: 'revert', key: 'zzz' }, 3 * MIN],
      ]);
      expect(typesOf(decisions[2])).toEqual([]);
      expect(decisions[3].state).toBeUndefined();
      expect(state).toMatchObject({ status: 'completed', received_subunits: '10000000' });
    });

    it('takes a partial session back to pending without a webhook', () => {
      const { state, decisions } = run(session(), [
        [{ type: 'credit', deposit: dep('a', '1') }, MIN],
        [{ type: 'revert', key: 'a' }, 2 * MIN],
      ]);
      expect(typesOf(decisions[1])).toEqual([]);
      expect(state.status).toBe('pending');
    });
  });

  describe('simulate', () => {
    it("completes the owning sandbox merchant's pending or partial session with a simulated deposit of the rest", () => {
      const { state, decisions } = run(session(), [
        [{ type: 'credit', deposit: dep('a', '4000000') }, MIN],
        [{ type: 'simulate', caller_merchant_id: 'mer_a' }, 2 * MIN],
      ]);
      expect(typesOf(decisions[1])).toEqual(['payment_session.completed']);
      expect(state).toMatchObject({ status: 'completed', received_subunits: '10000000' });
      expect(state.deposits[1]).toMatchObject({ simulated: true, amount_subunits: '6000000', tx_hash: null });
    });

    it('completes a demo session for anyone, without a webhook row (no merchant)', () => {
      const { state, decisions } = run(session({ demo: true, merchant_id: 'demo', environment: 'demo' }), [
        [{ type: 'simulate', caller_merchant_id: null }, MIN],
      ]);
      expect(eventsOf(decisions[0])).toEqual([]);
      expect(state.status).toBe('completed');
    });

    it('refuses non-demo sessions of live merchants, other callers, and non-open sessions', () => {
      const live = run(session({ sandbox: false, environment: 'live' }), [[{ type: 'simulate', caller_merchant_id: 'mer_a' }, MIN]]);
      expect(live.decisions[0].reply.refused).toBe('blocked_non_demo');
      expect(live.decisions[0].state).toBeUndefined();
      const other = run(session(), [
        [{ type: 'simulate', caller_merchant_id: 'mer_b' }, MIN],
        [{ type: 'simulate', caller_merchant_id: null }, MIN],
      ]);
      expect(other.decisions.map((d) => d.reply.refused)).toEqual(['blocked_non_demo', 'blocked_non_demo']);
      const twice = run(session(), [
        [{ type: 'simulate', caller_merchant_id: 'mer_a' }, MIN],
        [{ type: 'simulate', caller_merchant_id: 'mer_a' }, MIN],
      ]);
      expect(twice.decisions[1].reply.refused).toBe('blocked_non_pending');
      expect(twice.decisions[1].state).toBeUndefined();
    });

    it('expires a due session instead of completing it', () => {
      const { state, decisions } = run(session(), [[{ type: 'simulate', caller_merchant_id: 'mer_a' }, 15 * MIN]]);
      expect(decisions[0].reply.refused).toBe('blocked_non_pending');
      expect(typesOf(decisions[0])).toEqual(['payment_session.expired']);
      expect(state.status).toBe('expired');
    });
  });

  it('refuses malformed deposits and messages to a missing session', () => {
    const s = decideSession(null, { type: 'create', session: session() }, at(0)).state!;
    expect(() => decideSession(s, { type: 'credit', deposit: dep('a', '0') }, at(1))).toThrow(/positive integer/);
    expect(() => decideSession(s, { type: 'credit', deposit: dep('a', '1.5') }, at(1))).toThrow(/positive integer/);
    expect(() => decideSession(null, { type: 'expire' }, at(1))).toThrow(/not found/);
  });
});

// -------------------------------------------------------------------------------------------------
// Property: random sequences of credits (with duplicates), reverts, simulations and clock moves.

type Cmd =
  | { kind: 'credit'; key: number; amount: bigint; wrongToken: boolean; detectedLag: number }
  | { kind: 'revert'; key: number }
  | { kind: 'simulate'; caller: 'owner' | 'other' | 'anonymous' }
  | { kind: 'expire' }
  | { kind: 'tick'; ms: number };

const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('credit' as const),
      key: fc.integer({ min: 0, max: 5 }),
      amount: fc.bigInt({ min: 1n, max: 6_000_000n }),
      wrongToken: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      detectedLag: fc.integer({ min: 0, max: 3 * MIN }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('revert' as const), key: fc.integer({ min: 0, max: 5 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('simulate' as const),
      caller: fc.constantFrom('owner' as const, 'other' as const, 'anonymous' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 6 * MIN }) }) },
);

const EVENT_STATUS: Record<string, SessionStatus> = {
  'payment_session.partial_paid': 'partial_paid',
  'payment_session.completed': 'completed',
  'payment_session.expired': 'expired',
};

describe('payment session state machine (property)', () => {
  it('keeps its invariants under any sequence of messages', () => {
    fc.assert(
      fc.property(
        fc.record({ demo: fc.boolean(), sandbox: fc.boolean(), expected: fc.bigInt({ min: 1n, max: 10_000_000n }) }),
        fc.array(cmdArb, { maxLength: 40 }),
        (kind, cmds) => {
          const initial = session({
            demo: kind.demo,
            sandbox: kind.demo || kind.sandbox,
            merchant_id: kind.demo ? 'demo' : 'mer_a',
            environment: kind.demo ? 'demo' : kind.sandbox ? 'sandbox' : 'live',
            expected_subunits: kind.expected.toString(),
          });
          let state = decideSession(null, { type: 'create', session: initial }, at(0)).state!;
          let clock = 0;
          // the model: what each deposit key currently contributes
          const model = new Map<string, { amount: bigint; counted: boolean; reverted: boolean }>();
          for (const cmd of cmds) {
            if (cmd.kind === 'tick') {
              clock += cmd.ms;
              continue;
            }
            const now = at(clock);
            let msg: SessionMsg;
            if (cmd.kind === 'credit') {
              const key = `k${cmd.key}`;
              // a key always names the same transfer: the first amount seen for it
              const amount = model.get(key)?.amount ?? cmd.amount;
              msg = {
                type: 'credit',
                deposit: dep(key, amount.toString(), {
                  token: cmd.wrongToken ? 'ETH' : 'USDC',
                  detected_at: at(Math.max(0, clock - cmd.detectedLag)).toISOString(),
                }),
              };
            } else if (cmd.kind === 'revert') {
              msg = { type: 'revert', key: `k${cmd.key}` };
            } else if (cmd.kind === 'simulate') {
              msg = {
                type: 'simulate',
                caller_merchant_id: cmd.caller === 'owner' ? state.merchant_id : cmd.caller === 'other' ? 'mer_other' : null,
              };
            } else {
              msg = { type: 'expire' };
            }
            const before = structuredClone(state);
            const d = decideSession(structuredClone(state), msg, now);
            const after = d.state ?? before;

            // model update (credits and reverts as the chain reported them)
            if (cmd.kind === 'credit') {
              const key = `k${cmd.key}`;
              const m = model.get(key);
              const credit = (msg as { deposit: DepositInput }).deposit;
              if (!m || m.reverted)
                model.set(key, { amount: BigInt(credit.amount_subunits), counted: credit.token === 'USDC', reverted: false });
            } else if (cmd.kind === 'revert') {
              const m = model.get(`k${cmd.key}`);
              if (m) m.reverted = true;
            }
            let modelSum = 0n;
            for (const m of model.values()) if (m.counted && !m.reverted) modelSum += m.amount;
            const simulated = after.deposits.filter((x) => x.simulated).reduce((s, x) => s + BigInt(x.amount_subunits), 0n);

            // received == sum of credited deposits (and the model's sum plus what simulation added)
            expect(after.received_subunits).toBe(receivedOf(after.deposits).toString());
            expect(BigInt(after.received_subunits)).toBe(modelSum + simulated);
            // no deposit is ever dropped
            for (const key of model.keys()) expect(after.deposits.some((x) => x.key === key)).toBe(true);

            // status agrees with the amounts
            const received = BigInt(after.received_subunits);
            const expected = BigInt(after.expected_subunits);
            if (after.status === 'pending') expect(received).toBe(0n);
            if (after.status === 'partial_paid') expect(received > 0n && received < expected).toBe(true);
            if (after.status === 'completed') expect(received >= expected).toBe(true);
            expect(after.expiry_due_at === null).toBe(after.status === 'completed' || after.status === 'expired');

            // no way out of a terminal state, except a revert that takes the completion's money back
            if (before.status === 'expired') expect(after.status).toBe('expired');
            if (before.status === 'completed' && after.status !== 'completed') {
              expect(msg.type).toBe('revert');
              expect(received < expected).toBe(true);
            }

            // webhooks: exactly one event per named transition, none for demo sessions, never twice in a step
            const types = typesOf(d);
            expect(new Set(types).size).toBe(types.length);
            if (after.demo) expect(types).toEqual([]);
            else if (types.length) expect(EVENT_STATUS[types[types.length - 1]]).toBe(after.status);
            // completed is told once per session (a re-completion after a reorg keeps the first event)
            const toldBefore = before.events.some((e) => e.type === 'payment_session.completed');
            if (
              !after.demo &&
              after.status !== before.status &&
              after.status !== 'pending' &&
              !(after.status === 'completed' && toldBefore)
            ) {
              expect(types[types.length - 1]).toBe(`payment_session.${after.status}`);
            }
            expect(after.events.filter((e) => e.type === 'payment_session.completed').length).toBeLessThanOrEqual(1);
            if (after.status === before.status) expect(types.filter((t) => EVENT_STATUS[t] === after.status)).toEqual([]);
            expect(after.events.slice(before.events.length).map((e) => e.id)).toEqual(eventsOf(d).map((e) => e.id));
            expect(d.reply.events).toEqual(d.state ? eventsOf(d).map((e) => e.id) : []);

            // an open session is never left past its deadline by an expire or a simulate
            if ((msg.type === 'expire' || msg.type === 'simulate') && (after.status === 'pending' || after.status === 'partial_paid')) {
              expect(now.getTime() < Date.parse(after.expires_at)).toBe(true);
            }
            // simulate refusals follow the rule
            if (msg.type === 'simulate') {
              const allowed = after.demo || (after.sandbox && msg.caller_merchant_id === after.merchant_id);
              if (!allowed) expect(d.reply.refused).toBe('blocked_non_demo');
              else if (d.reply.refused === undefined) expect(after.status).toBe('completed');
              else expect(d.reply.refused).toBe('blocked_non_pending');
            }
            state = after;
          }
          // over the whole run: each named event type once per transition into that status
          const entered = { partial_paid: 0, completed: 0, expired: 0 } as Record<string, number>;
          for (const e of state.events) entered[EVENT_STATUS[e.type]]++;
          expect(entered.expired).toBeLessThanOrEqual(1);
          if (!cmds.some((c) => c.kind === 'revert')) {
            expect(entered.completed).toBeLessThanOrEqual(1);
            expect(entered.partial_paid).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
