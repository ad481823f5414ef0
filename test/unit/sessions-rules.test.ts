/**
 * The sessions rules of lib/sessions/ without a broker: the creation policy in its documented order,
 * demo decisions, access, the daily volume (pure step and the compare-and-set loop on a real SQLite
 * store under concurrency), and the one idempotency-key rule shared by every create.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { buildRails, type Rail } from '../../config/rails.ts';
import {
  PolicyRefusal,
  checkAmountLimit,
  checkNetworkAccess,
  checkoutReference,
  decideCreateBody,
  decideDemo,
  needsKyc,
  type CreateBody,
  type DemoBody,
  type CreateRequest,
} from '../../lib/sessions/policy.ts';
import { DailyVolume, nextVolume } from '../../lib/sessions/volume.ts';
import { readAccess, simulateHidden } from '../../lib/sessions/access.ts';
import { newSessionState } from '../../lib/sessions/new-session.ts';
import { idempotencyKey } from '../../lib/core/idempotency.ts';
import { floorSubunits } from '../../lib/core/money.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { tempDir } from '../helpers/node.ts';
import { sessionBehavior, type PaymentSessionState } from '../../lib/sessions/payment-session.ts';
import { ActorHost } from '../../actors/runtime.ts';

const rails = buildRails({
  ethereum: { testnet: { rpcUrl: '' }, mainnet: { rpcUrl: 'http://x' } },
  solana: { testnet: { rpcUrl: '' }, mainnet: { rpcUrl: '' } },
});
const ETH_USDC = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } as const;
const body = (over: Partial<CreateBody> = {}): CreateBody => ({ amount: 12.5, expires_in: '15m', paymentMethod: ETH_USDC, ...over });
const rail = (chain: string, network: string, token: string) =>
  rails.find((r) => r.chain === chain && r.network === network && r.token === token)!;
const message = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return null;
};

describe('creation policy', () => {
  it('decides rail, amount in smallest units, duration and metadata', () => {
    const r = decideCreateBody(body({ metadata: { order: 7 } }), rails);
    expect(r.rail).toBe(rail('ethereum', 'testnet', 'USDC'));
    expect(r.expected).toBe(12_500_000n);
    expect(r.expiresMs).toBe(15 * 60_000);
    expect(r.metadata).toEqual({ order: 7 });
  });

  it('refuses in the documented order, each with what to change', () => {
    // several faults at once: the first check in the order answers
    expect(
      message(() => decideCreateBody(body({ paymentMethod: { ...ETH_USDC, methodID: 1 }, amount: -1, expires_in: 'x' }), rails)),
    ).toMatch(/methodID 1/);
    expect(message(() => decideCreateBody(body({ paymentMethod: { ...ETH_USDC, token: 'DOGE' }, amount: -1 }), rails))).toMatch(
      /no enabled rail/,
    );
    expect(message(() => decideCreateBody(body({ expires_in: '8d', amount: 0.0000001 }), rails))).toMatch(
      /expires_in must be between 10s and 7d/,
    );
    expect(message(() => decideCreateBody(body({ amount: 0.0000001 }), rails))).toMatch(/more decimal places/);
    expect(message(() => decideCreateBody(body({ amount: 0.001 }), rails))).toMatch(/below the minimum of 0.01/);
    expect(message(() => decideCreateBody(body({ metadata: { big: 'x'.repeat(5000) } }), rails))).toMatch(/larger than 4KB/);
    expect(message(() => decideCreateBody(body({ paymentMethod: undefined }), rails))).toMatch(/paymentMethod is required/);
    expect(message(() => decideCreateBody(body({ payment_method: { ...ETH_USDC, token: 'ETH' } }), rails))).toMatch(/the two differ/);
    expect(decideCreateBody(body({ paymentMethod: undefined, payment_method: ETH_USDC }), rails).rail.token).toBe('USDC');
  });

  it('mainnet needs a live merchant with KYC; refusals carry their abuse outcome and rail', () => {
    const main = rail('ethereum', 'mainnet', 'USDC');
    expect(needsKyc(main, false)).toBe(true);
    expect(needsKyc(main, true)).toBe(false);
    expect(needsKyc(rail('ethereum', 'testnet', 'USDC'), false)).toBe(false);
    expect(() => checkNetworkAccess(main, false, 'verified')).not.toThrow();
    for (const [sandbox, kyc] of [
      [true, 'verified'],
      [false, 'none'],
      [false, undefined],
    ] as const) {
      let err: unknown;
      try {
        checkNetworkAccess(main, sandbox, kyc);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(PolicyRefusal);
      expect(err).toMatchObject({ code: 403, outcome: 'mainnet_kyc_required', rail: main });
    }
    // live merchants are paid on mainnet only: a testnet rail is refused, without an abuse signal
    let live: unknown;
    try {
      checkNetworkAccess(rail('ethereum', 'testnet', 'USDC'), false, 'verified');
    } catch (e) {
      live = e;
    }
    expect(live).toMatchObject({ code: 403 });
    expect(live).not.toBeInstanceOf(PolicyRefusal);
    expect(() => checkNetworkAccess(rail('ethereum', 'testnet', 'USDC'), true, undefined)).not.toThrow();
    expect(() => checkAmountLimit(5_000_000n, main, '5')).not.toThrow();
    expect(() => checkAmountLimit(5_000_001n, main, '5')).toThrow(PolicyRefusal);
    expect(() => checkAmountLimit(10n ** 30n, main, null)).not.toThrow();
  });

  it('caps with more decimals than the token round down', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 1, max: 12 }), (units, extra) => {
        const text = `${units}.${'9'.repeat(extra)}`;
        expect(floorSubunits(text, 0)).toBe(units);
      }),
    );
    expect(floorSubunits('1.23456789', 6)).toBe(1_234_567n);
  });

  it('checkout references must be non-empty strings', () => {
    expect(checkoutReference({})).toBeUndefined();
    expect(checkoutReference({ checkout_reference_id: 'cref_1' })).toBe('cref_1');
    expect(() => checkoutReference({ checkout_reference_id: '' })).toThrow(/non-empty string/);
    expect(() => checkoutReference({ checkout_reference_id: 5 })).toThrow(/non-empty string/);
  });

  it('demo sessions: testnet only, USDC preferred, 1 USDC or 100 × the minimum by default, at most 1000', () => {
    expect(decideDemo({}, rails)).toMatchObject({ expected: 1_000_000n, expiresMs: 15 * 60_000 });
    expect(decideDemo({}, rails).rail.token).toBe('USDC');
    const sol = decideDemo({ chain: 'solana', token: 'SOL' }, rails);
    expect(sol.expected).toBe(10_000_000n); // 0.0001 SOL × 100
    // the schema allows only testnet; the rule refuses mainnet on its own too
    expect(() => decideDemo({ network: 'mainnet' } as unknown as DemoBody, rails)).toThrow(/testnet rails only/);
    expect(() => decideDemo({ amount: 1001 }, rails)).toThrow(/at most 1000/);
    expect(() => decideDemo({ expires_in: '2h' }, rails)).toThrow(/between 10s and 1h/);
    expect(() => decideDemo({ chain: 'bitcoin' }, rails)).toThrow(/no testnet rail matches/);
  });

  it('a new session is pending with nothing received and the allocated address', () => {
    const now = new Date('2026-03-01T00:00:00.000Z');
    const req = decideCreateBody(body(), rails) as CreateRequest;
    const s = newSessionState(
      { merchant_id: 'mer_x', sandbox: true, demo: false, environment: 'sandbox' },
      req,
      { address: '0xA', index: 4, fingerprint: 'ff' },
      now,
      'ps_1',
    );
    expect(s).toMatchObject({
      id: 'ps_1',
      status: 'pending',
      received_subunits: '0',
      expected_subunits: '12500000',
      address: '0xA',
      address_index: 4,
      key_fingerprint: 'ff',
      expires_at: '2026-03-01T00:15:00.000Z',
      chain: 'ethereum',
      network: 'testnet',
      token: 'USDC',
      decimals: 6,
    });
  });
});

describe('access', () => {
  const s = (over: Partial<PaymentSessionState>) => ({ merchant_id: 'mer_a', demo: false, ...over }) as PaymentSessionState;
  const merchant = (id: string) => ({ kind: 'merchant' as const, merchant_id: id, sandbox: true, key_id: 'k' });
  it('owner and demo sessions are readable; others look unknown, anonymous callers get 401', () => {
    expect(readAccess(s({}), merchant('mer_a'))).toBe('ok');
    expect(readAccess(s({}), merchant('mer_b'))).toBe('not_found');
    expect(readAccess(null, merchant('mer_a'))).toBe('not_found');
    expect(readAccess(s({ demo: true }), merchant('mer_b'))).toBe('ok');
    expect(readAccess(s({ demo: true }), null)).toBe('ok');
    expect(readAccess(s({}), null)).toBe('unauthorized');
    expect(readAccess(null, undefined)).toBe('unauthorized');
    expect(simulateHidden(s({}), 'mer_b')).toBe(true);
    expect(simulateHidden(s({}), 'mer_a')).toBe(false);
    expect(simulateHidden(s({}), null)).toBe(true);
    expect(simulateHidden(s({ demo: true }), 'mer_b')).toBe(false);
  });
});

describe('idempotency key rule (every create)', () => {
  it('1 to 255 visible ASCII characters', () => {
    expect(idempotencyKey(undefined)).toBeUndefined();
    expect(idempotencyKey('order-1001')).toBe('order-1001');
    expect(idempotencyKey('~'.repeat(255))).toHaveLength(255);
    for (const bad of ['', ' ', 'a b', 'é', 'x'.repeat(256), '\t', 5]) expect(() => idempotencyKey(bad)).toThrow(/1 to 255 visible ASCII/);
  });
});

describe('daily volume', () => {
  it('the pure step: within the cap adds, past it refuses, releases never go below 0', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        (used, delta, limit) => {
          const added = nextVolume(used, delta, limit, true);
          expect(added === null ? used + delta > limit : added === used + delta).toBe(true);
          expect(nextVolume(used, -delta, limit, false)).toBe(used - delta < 0n ? 0n : used - delta);
        },
      ),
    );
  });

  describe('on a store', () => {
    let dir: string;
    let store: Store;
    beforeAll(async () => {
      dir = tempDir();
      store = await openStore(`sqlite:${join(dir, 'store.db')}`);
    });
    afterAll(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the session actor creates a session without reading its new id first (the insert is the guard)', async () => {
      const reads: string[] = [];
      // the store, with its point reads recorded
      const spied = new Proxy(store, {
        get(target, key) {
          if (key === 'get') return (coll: string, id: string) => (reads.push(`${coll}/${id}`), target.get(coll, id));
          const v = Reflect.get(target, key, target) as unknown;
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const host = new ActorHost(spied, sessionBehavior());
      try {
        const req = decideCreateBody(body(), rails) as CreateRequest;
        const owner = { merchant_id: 'mer_c', sandbox: true, demo: false, environment: 'sandbox' as const };
        const session = newSessionState(owner, req, { address: '0xC0', index: 9, fingerprint: 'ff' }, new Date());
        const reply = await host.send(session.id, { type: 'create', session });
        expect(reply.session).toMatchObject({ id: session.id, status: 'pending' });
        expect(reads.filter((r) => r.startsWith('payment_sessions/'))).toEqual([]);
        expect(await store.get('payment_sessions', session.id)).toMatchObject({ status: 'pending', address: '0xC0' });
      } finally {
        host.stop();
      }
    });

    it('concurrent reservations never pass the cap, and a release frees its amount', async () => {
      const usdc: Rail = rail('ethereum', 'testnet', 'USDC');
      const volume = new DailyVolume(store, () => new Date()); // the store expires counters by the real clock
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => volume.reserve('mer_v', usdc, 1_000_000n, '10', `ps_c${i}`)),
      );
      const ok = results.filter((r) => r.status === 'fulfilled');
      expect(ok).toHaveLength(10);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(PolicyRefusal);
      expect(refused.reason.message).toMatch(/daily volume limit of 10 USDC on ethereum testnet reached: 0 USDC left today/);
      await (ok[0] as PromiseFulfilledResult<() => Promise<void>>).value();
      await expect(volume.reserve('mer_v', usdc, 1_000_000n, '10', 'ps_c12')).resolves.toBeInstanceOf(Function);
    });

    it('a session is counted once, whichever requests reserve or release it and in whatever order (property)', async () => {
      const usdc: Rail = rail('ethereum', 'testnet', 'USDC');
      const volume = new DailyVolume(store, () => new Date());
      const step = fc.record({ session: fc.integer({ min: 0, max: 5 }), release: fc.boolean(), amount: fc.integer({ min: 1, max: 4 }) });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }), async (rounds) => {
          const merchant = `mer_p${run++}`;
          const ids = (k: number) => `ps_${merchant}_${k}`;
          /** what each session was granted (its first reservation's amount), as the model sees it */
          const granted = new Map<number, bigint>();
          for (const round of rounds) {
            // a round's requests run at once: two attempts at one session race each other and a release
            const outcomes = await Promise.allSettled(
              round.map(async (c) => {
                const amount = BigInt(c.amount) * 1_000_000n;
                const release = await volume.reserve(merchant, usdc, amount, '10', ids(c.session));
                if (c.release) await release();
              }),
            );
            for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(PolicyRefusal);
            // the model, read back: a session holds a share or none, and the day's counter is the sum of the shares
            granted.clear();
            for (let k = 0; k <= 5; k++) {
              const hold = await store.get<{ id: string; amount_subunits: string }>('session_volume_holds', ids(k));
              if (hold) granted.set(k, BigInt(hold.amount_subunits));
            }
            const counter = await store.findOne<{ id: string; sum_subunits: string }>('session_volume', { merchant_id: merchant });
            const held = [...granted.values()].reduce((a, b) => a + b, 0n);
            expect(BigInt(counter?.sum_subunits ?? '0')).toBe(held);
            expect(held).toBeLessThanOrEqual(10_000_000n);
          }
        }),
        { numRuns: 40 },
      );
    });

    it('a second reservation of one session adds nothing, even over the cap, and its release frees the amount once', async () => {
      const usdc: Rail = rail('ethereum', 'testnet', 'USDC');
      const volume = new DailyVolume(store, () => new Date());
      const sum = async () =>
        (await store.findOne<{ id: string; sum_subunits: string }>('session_volume', { merchant_id: 'mer_once' }))?.sum_subunits;
      await volume.reserve('mer_once', usdc, 6_000_000n, '10', 'ps_once');
      // the retry of a create whose outcome was unknown: 6 + 6 would pass the cap of 10, but it is one session
      const release = await volume.reserve('mer_once', usdc, 6_000_000n, '10', 'ps_once');
      expect(await sum()).toBe('6000000');
      await expect(volume.reserve('mer_once', usdc, 6_000_000n, '10', 'ps_other')).rejects.toBeInstanceOf(PolicyRefusal);
      await release();
      await release();
      expect(await sum()).toBe('0');
      await expect(volume.reserve('mer_once', usdc, 6_000_000n, '10', 'ps_other')).resolves.toBeInstanceOf(Function);
    });
  });
});
