/**
 * The deposit ledger (lib/chains/deposits.ts) and the listener lease (lib/chains/lease.ts) on a real
 * SQLite store, with the session actor's real transition function behind a fake `send`: classification,
 * replay, delivery retries, a revert racing an in-flight credit, a reorged transaction found again, and
 * lease take-over by expiry.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, type Store } from '../../lib/store/index.ts';
import { tempDir } from '../helpers/node.ts';
import { DepositLedger, classify, depositKey, type DepositDoc, type FoundDeposit } from '../../lib/chains/deposits.ts';
import { Lease } from '../../lib/chains/lease.ts';
import { SessionAddressBook, sessionIdAt } from '../../lib/chains/address-book.ts';
import { decideSession, type PaymentSessionState, type SessionMsg, type SessionReply } from '../../actors/payment-session.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { WatchedAddress } from '../../lib/chains/address-book.ts';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

function sessionState(id: string): PaymentSessionState {
  const at = new Date(T0).toISOString();
  return decideSession(null, {
    type: 'create',
    session: {
      id, merchant_id: 'mer_a', demo: false, sandbox: true, environment: 'sandbox', method_id: 0, chain: 'ethereum', network: 'testnet',
      token: 'USDC', decimals: 6, expected_subunits: '5000000', received_subunits: '0', address: '0xAbC', address_index: 1, key_fingerprint: 'f',
      status: 'pending', metadata: {}, expires_at: new Date(T0 + 3_600_000).toISOString(), expiry_due_at: null, completed_at: null, expired_at: null,
      created_at: at, updated_at: at, deposits: [], events: [],
    },
  }, new Date(T0)).state!;
}

/** a session actor in memory: the real transition function, messages applied in arrival order */
function fakeActor() {
  const states = new Map<string, PaymentSessionState>();
  const log: SessionMsg[] = [];
  let gate: Promise<void> | null = null;
  return {
    states,
    log,
    /** the next credit is held until the returned function is called (a slow delivery) */
    holdNextCredit(): () => void {
      let open!: () => void;
      gate = new Promise((r) => { open = r; });
      return open;
    },
    send: async (id: string, msg: SessionMsg): Promise<SessionReply> => {
      if (msg.type === 'credit' && gate) {
        const g = gate;
        gate = null;
        await g;
      }
      const s = states.get(id);
      if (!s) throw new ServiceError(404, 'payment session not found', 'NOT_FOUND');
      log.push(msg);
      const d = decideSession(structuredClone(s), msg, new Date(T0 + 60_000));
      if (d.state) states.set(id, d.state);
      return d.reply;
    },
  };
}

const target: WatchedAddress = { session_id: 'ps_1', address: '0xAbC', network: 'testnet', token: 'USDC', expires_ms: T0 + 3_600_000 };

function found(over: Partial<FoundDeposit> = {}): FoundDeposit {
  return {
    chain: 'ethereum', network: 'testnet', tx_hash: '0xaa', index: 0, to_address: '0xAbC', from_address: '0xF00', account: null,
    token: 'USDC', token_contract: '0xUSDC', amount_subunits: '5000000', block_number: 10, block_hash: '0xb10', block_time_ms: T0 + 1000,
    confirmations: 1, ...over,
  };
}

describe('deposit ledger', () => {
  let dir: string;
  let store: Store;
  let now: number;

  beforeEach(async () => {
    dir = tempDir('deposits-unit-');
    store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
    now = T0 + 5000;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ledgerWith = (actor: ReturnType<typeof fakeActor>) => new DepositLedger(store, { send: actor.send, now: () => new Date(now), log: { warn: () => undefined } });

  it('classifies: the session\'s token on its network is paid; everything else is an orphan', () => {
    expect(classify(found(), target)).toEqual({ status: 'seen', reason: null });
    expect(classify(found(), undefined)).toEqual({ status: 'orphan', reason: 'unknown_address' });
    expect(classify(found({ network: 'mainnet' }), target)).toEqual({ status: 'orphan', reason: 'wrong_network' });
    expect(classify(found({ token: null }), target)).toEqual({ status: 'orphan', reason: 'wrong_token' });
    expect(classify(found({ token: 'ETH' }), target)).toEqual({ status: 'orphan', reason: 'wrong_token' });
  });

  it('stores first, delivers once; a replay is ignored', async () => {
    const actor = fakeActor();
    actor.states.set('ps_1', sessionState('ps_1'));
    const ledger = ledgerWith(actor);
    const doc = await ledger.record(found(), target);
    expect(doc).toEqual(expect.objectContaining({ id: depositKey(found()), status: 'seen', delivered: false, detected_at: new Date(T0 + 1000).toISOString() }));
    expect(actor.log).toEqual([]);
    expect(await ledger.deliver(doc!.id, doc!)).toBe(true);
    expect(await ledger.record(found(), target)).toBeNull();
    const stored = await store.get<DepositDoc>('deposits', doc!.id);
    expect(stored).toEqual(expect.objectContaining({ status: 'credited', delivered: true, next_delivery_at: null, credit_result: 'credited' }));
    expect(actor.states.get('ps_1')!.status).toBe('completed');
    expect(actor.log).toHaveLength(1);
  });

  it('an orphan is stored and never sent', async () => {
    const actor = fakeActor();
    const ledger = ledgerWith(actor);
    expect(await ledger.record(found({ token: null, token_contract: '0xOTHER' }), target)).toBeNull();
    const stored = await store.get<DepositDoc>('deposits', depositKey(found()));
    expect(stored).toEqual(expect.objectContaining({ status: 'orphan', orphan_reason: 'wrong_token', session_id: 'ps_1', delivered: true, next_delivery_at: null }));
    expect(await ledger.redeliverDue('ethereum')).toBe(0);
    expect(actor.log).toEqual([]);
  });

  it('a failed delivery is retried by the scanner with a backoff', async () => {
    const actor = fakeActor();
    const ledger = ledgerWith(actor);
    let down = true;
    const flaky = new DepositLedger(store, {
      send: async (id, msg) => {
        if (down) throw new Error('no session-actors node');
        return actor.send(id, msg);
      },
      now: () => new Date(now), log: { warn: () => undefined },
    });
    actor.states.set('ps_1', sessionState('ps_1'));
    const doc = await flaky.record(found(), target);
    expect(await flaky.deliver(doc!.id, doc!)).toBe(false);
    const failed = await store.get<DepositDoc>('deposits', doc!.id);
    expect(failed).toEqual(expect.objectContaining({ status: 'seen', delivered: false, delivery_attempts: 1, last_error: 'no session-actors node' }));
    expect(Date.parse(failed!.next_delivery_at!)).toBeGreaterThan(now);
    expect(await flaky.redeliverDue('ethereum')).toBe(0); // not due yet
    down = false;
    now = Date.parse(failed!.next_delivery_at!) + 1;
    expect(await flaky.redeliverDue('ethereum')).toBe(1);
    expect((await store.get<DepositDoc>('deposits', doc!.id))!.status).toBe('credited');
    expect(actor.states.get('ps_1')!.received_subunits).toBe('5000000');
    expect(await ledger.redeliverDue('ethereum')).toBe(0);
  });

  it('a session that does not exist turns the deposit into an orphan (unknown_address)', async () => {
    const actor = fakeActor();
    const ledger = ledgerWith(actor);
    const doc = await ledger.record(found(), target);
    expect(await ledger.deliver(doc!.id, doc!)).toBe(true);
    expect(await store.get<DepositDoc>('deposits', doc!.id)).toEqual(expect.objectContaining({ status: 'orphan', orphan_reason: 'unknown_address', delivered: true }));
  });

  it('a revert racing an in-flight credit: the session ends with the deposit taken back', async () => {
    const actor = fakeActor();
    actor.states.set('ps_1', sessionState('ps_1'));
    const ledger = ledgerWith(actor);
    const doc = await ledger.record(found(), target);
    const release = actor.holdNextCredit();
    const slowCredit = ledger.deliver(doc!.id, doc!);
    // meanwhile the block leaves the chain: stored as reverted, revert delivered (a no-op: the credit is not there yet)
    const reverted = await ledger.revertAbove('ethereum', 'testnet', 9);
    expect(reverted.map((d) => d.id)).toEqual([doc!.id]);
    expect(await ledger.deliver(doc!.id)).toBe(true);
    // the held credit lands after the revert; its deliverer sees the document changed and sends revert again
    release();
    await slowCredit;
    expect(actor.log.map((m) => m.type)).toEqual(['revert', 'credit', 'revert']);
    const s = actor.states.get('ps_1')!;
    expect(s.received_subunits).toBe('0');
    expect(s.status).toBe('pending');
    expect(s.deposits).toEqual([expect.objectContaining({ key: doc!.id, reverted: true })]);
    expect(await store.get<DepositDoc>('deposits', doc!.id)).toEqual(expect.objectContaining({ status: 'reverted', delivered: true }));
  });

  it('a reorged transaction found again on the new branch is credited again under the same key', async () => {
    const actor = fakeActor();
    actor.states.set('ps_1', sessionState('ps_1'));
    const ledger = ledgerWith(actor);
    const first = await ledger.record(found(), target);
    await ledger.deliver(first!.id, first!);
    for (const d of await ledger.revertAbove('ethereum', 'testnet', 9)) await ledger.deliver(d.id, d);
    expect(actor.states.get('ps_1')!.status).toBe('pending');
    // below the fork nothing is touched
    expect(await ledger.revertAbove('ethereum', 'testnet', 10)).toEqual([]);
    const again = await ledger.record(found({ block_number: 11, block_hash: '0xb11' }), target);
    expect(again).toEqual(expect.objectContaining({ id: first!.id, status: 'seen', block_number: 11, reverted_at: null }));
    await ledger.deliver(again!.id, again!);
    const s = actor.states.get('ps_1')!;
    expect(s.status).toBe('completed');
    expect(s.deposits).toEqual([expect.objectContaining({ key: first!.id, reverted: false, block_number: 11 })]);
    expect(await store.get<DepositDoc>('deposits', first!.id)).toEqual(expect.objectContaining({ status: 'credited', block_hash: '0xb11' }));
  });
});

describe('listener lease', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = tempDir('lease-unit-');
    store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one holder at a time; renewals keep it; a lapsed lease is taken over; release hands it on', async () => {
    let now = T0;
    const clock = () => new Date(now);
    const a = new Lease(store, 'ethereum:testnet', 'node-a', 10_000, clock);
    const b = new Lease(store, 'ethereum:testnet', 'node-b', 10_000, clock);
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    const v1 = (await store.get('listener_leases', 'ethereum:testnet'))!.version;
    now += 1000;
    expect(await a.hold()).toBe(true); // within a third of the TTL: no write
    expect((await store.get('listener_leases', 'ethereum:testnet'))!.version).toBe(v1);
    now += 4000;
    expect(await a.hold()).toBe(true); // renewed
    expect((await store.get<any>('listener_leases', 'ethereum:testnet'))!.expires_at).toBe(new Date(now + 10_000).toISOString());
    now += 9_999;
    expect(await b.hold()).toBe(false);
    now += 2; // a stopped renewing: lapsed
    expect(await b.hold()).toBe(true);
    expect(await a.hold()).toBe(false);
    expect(a.held).toBe(false);
    await a.release(); // not the owner: nothing changes
    expect(await b.hold()).toBe(true);
    await b.release();
    expect(await a.hold()).toBe(true);
    expect((await store.get<any>('listener_leases', 'ethereum:testnet'))!.owner).toBe('node-a');
  });

  it('two nodes racing for a free lease: exactly one wins', async () => {
    const leases = Array.from({ length: 6 }, (_, i) => new Lease(store, 'solana:testnet', `node-${i}`, 10_000));
    const won = await Promise.all(leases.map((l) => l.hold()));
    expect(won.filter(Boolean)).toHaveLength(1);
  });
});

describe('session address book', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = tempDir('book-unit-');
    store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const put = (id: string, address: string, expiresMs: number, chain = 'ethereum') =>
    store.write([{ op: 'insert', coll: 'payment_sessions', doc: { id, chain, network: 'testnet', token: 'USDC', address, expires_at: new Date(expiresMs).toISOString() } }]);

  it('sessionIdAt matches the time part of session ids', () => {
    expect(sessionIdAt(0)).toBe('ps_0000000000');
    expect(sessionIdAt(Date.parse('2026-01-01T00:00:00Z')) < sessionIdAt(Date.parse('2026-01-01T00:00:00.001Z'))).toBe(true);
  });

  it('loads sessions of its chain, picks up new ones incrementally, drops those past the window', async () => {
    const wall = Date.now();
    let now = wall;
    const book = new SessionAddressBook(store, 'ethereum', { keepAfterExpiryMs: 60_000, now: () => new Date(now), overlapMs: 5000 });
    await put(`${sessionIdAt(wall - 1000)}aaaaaaaaaaaaaaaa`, '0xAbCd', now + 3_600_000);
    await put(`${sessionIdAt(wall - 900)}bbbbbbbbbbbbbbbb`, 'SoLaNa111', now + 3_600_000, 'solana');
    await put(`${sessionIdAt(wall - 800)}cccccccccccccccc`, '0xOld', now - 120_000); // past expiry + window
    await book.refresh();
    expect(book.size).toBe(1);
    expect(book.get('0xabcd')).toEqual(expect.objectContaining({ address: '0xAbCd', network: 'testnet', token: 'USDC' }));
    expect(book.has('0xOld')).toBe(false);
    // a session whose id is a little older than the last refresh (made before, written after) is still found
    await put(`${sessionIdAt(wall - 2000)}dddddddddddddddd`, '0xLate', now + 3_600_000);
    await book.refresh();
    expect(book.has('0xlate')).toBe(true);
    expect(book.lastRead).toBeLessThanOrEqual(4);
    now += 3_600_000 + 60_001;
    expect(book.has('0xAbCd')).toBe(false);
    expect(book.entries()).toEqual([]);
  });
});
