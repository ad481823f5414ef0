/**
 * The deposit inbox (lib/chains/deposit-inbox.ts) and the listener lease (lib/chains/lease.ts) on a real
 * SQLite store, with the session actor's real transition function behind a fake `send`: classification,
 * replay, delivery retries, a revert racing an in-flight credit, a reorged transaction found again, and
 * lease take-over by expiry; the address book numbering new entries, and the Ethereum backfill window.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, type Store } from '../../lib/store/index.ts';
import { tempDir } from '../helpers/node.ts';
import { DepositInbox, classify, depositKey, type DepositDoc, type FoundDeposit } from '../../lib/chains/deposit-inbox.ts';
import { Lease } from '../../lib/chains/lease.ts';
import { SessionAddressBook, sessionIdAt } from '../../lib/chains/address-book.ts';
import { decideSession, type PaymentSessionState, type SessionMsg, type SessionReply } from '../../lib/sessions/payment-session.ts';
import { ServiceError } from '../../lib/core/errors.ts';
import type { WatchedAddress } from '../../lib/chains/address-book.ts';
import { findMissedDeposits, type BackfillChain } from '../../lib/chains/ethereum/backfill.ts';
import { addressTopic, TRANSFER_TOPIC } from '../../lib/chains/ethereum/erc20.ts';
import { getAddress } from 'ethers';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

function sessionState(id: string): PaymentSessionState {
  const at = new Date(T0).toISOString();
  return decideSession(
    null,
    {
      type: 'create',
      session: {
        id,
        merchant_id: 'mer_a',
        demo: false,
        sandbox: true,
        environment: 'sandbox',
        method_id: 0,
        chain: 'ethereum',
        network: 'testnet',
        token: 'USDC',
        decimals: 6,
        expected_subunits: '5000000',
        received_subunits: '0',
        address: '0xAbC',
        address_index: 1,
        key_fingerprint: 'f',
        status: 'pending',
        metadata: {},
        expires_at: new Date(T0 + 3_600_000).toISOString(),
        expiry_due_at: null,
        completed_at: null,
        expired_at: null,
        created_at: at,
        updated_at: at,
        deposits: [],
        events: [],
      },
    },
    new Date(T0),
  ).state!;
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
      gate = new Promise((r) => {
        open = r;
      });
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

const target: WatchedAddress = {
  session_id: 'ps_1',
  address: '0xAbC',
  network: 'testnet',
  token: 'USDC',
  expires_ms: T0 + 3_600_000,
  until_ms: T0 + 90_000_000,
  created_ms: T0,
  seq: 1,
};

function found(over: Partial<FoundDeposit> = {}): FoundDeposit {
  return {
    chain: 'ethereum',
    network: 'testnet',
    tx_hash: '0xaa',
    index: 0,
    to_address: '0xAbC',
    from_address: '0xF00',
    account: null,
    token: 'USDC',
    token_contract: '0xUSDC',
    amount_subunits: '5000000',
    block_number: 10,
    block_hash: '0xb10',
    block_time_ms: T0 + 1000,
    confirmations: 1,
    ...over,
  };
}

describe('deposit inbox', () => {
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

  const inboxWith = (actor: ReturnType<typeof fakeActor>) =>
    new DepositInbox(store, { send: actor.send, now: () => new Date(now), log: { warn: () => undefined } });

  it("classifies: the session's token on its network is paid; everything else is an orphan", () => {
    expect(classify(found(), target)).toEqual({ status: 'seen', reason: null });
    expect(classify(found(), undefined)).toEqual({ status: 'orphan', reason: 'unknown_address' });
    expect(classify(found({ network: 'mainnet' }), target)).toEqual({ status: 'orphan', reason: 'wrong_network' });
    expect(classify(found({ token: null }), target)).toEqual({ status: 'orphan', reason: 'wrong_token' });
    expect(classify(found({ token: 'ETH' }), target)).toEqual({ status: 'orphan', reason: 'wrong_token' });
    const amount = BigInt(found().amount_subunits);
    expect(classify(found(), target, amount + 1n)).toEqual({ status: 'orphan', reason: 'dust' });
    expect(classify(found(), target, amount)).toEqual({ status: 'seen', reason: null });
  });

  it('stores first, delivers once; a replay is ignored', async () => {
    const actor = fakeActor();
    actor.states.set('ps_1', sessionState('ps_1'));
    const inbox = inboxWith(actor);
    const doc = await inbox.record(found(), target);
    expect(doc).toEqual(
      expect.objectContaining({
        id: depositKey(found()),
        status: 'seen',
        delivered: false,
        detected_at: new Date(T0 + 1000).toISOString(),
      }),
    );
    expect(actor.log).toEqual([]);
    expect(await inbox.deliver(doc!.id, doc!)).toBe(true);
    expect(await inbox.record(found(), target)).toBeNull();
    const stored = await store.get<DepositDoc>('deposits', doc!.id);
    expect(stored).toEqual(
      expect.objectContaining({ status: 'credited', delivered: true, next_delivery_at: null, credit_result: 'credited' }),
    );
    expect(actor.states.get('ps_1')!.status).toBe('completed');
    expect(actor.log).toHaveLength(1);
  });

  it('an orphan is stored and never sent', async () => {
    const actor = fakeActor();
    const inbox = inboxWith(actor);
    expect(await inbox.record(found({ token: null, token_contract: '0xOTHER' }), target)).toBeNull();
    const stored = await store.get<DepositDoc>('deposits', depositKey(found()));
    expect(stored).toEqual(
      expect.objectContaining({
        status: 'orphan',
        orphan_reason: 'wrong_token',
        session_id: 'ps_1',
        delivered: true,
        next_delivery_at: null,
      }),
    );
    expect(await inbox.redeliverDue('ethereum')).toBe(0);
    expect(actor.log).toEqual([]);
  });

  it('a failed delivery is retried by the scanner with a backoff', async () => {
    const actor = fakeActor();
    const inbox = inboxWith(actor);
    let down = true;
    const flaky = new DepositInbox(store, {
      send: async (id, msg) => {
        if (down) throw new Error('no session-actors node');
        return actor.send(id, msg);
      },
      now: () => new Date(now),
      log: { warn: () => undefined },
    });
    actor.states.set('ps_1', sessionState('ps_1'));
    const doc = await flaky.record(found(), target);
    expect(await flaky.deliver(doc!.id, doc!)).toBe(false);
    const failed = await store.get<DepositDoc>('deposits', doc!.id);
    expect(failed).toEqual(
      expect.objectContaining({ status: 'seen', delivered: false, delivery_attempts: 1, last_error: 'no session-actors node' }),
    );
    expect(Date.parse(failed!.next_delivery_at!)).toBeGreaterThan(now);
    expect(await flaky.redeliverDue('ethereum')).toBe(0); // not due yet
    down = false;
    now = Date.parse(failed!.next_delivery_at!) + 1;
    expect(await flaky.redeliverDue('ethereum')).toBe(1);
    expect((await store.get<DepositDoc>('deposits', doc!.id))!.status).toBe('credited');
    expect(actor.states.get('ps_1')!.received_subunits).toBe('5000000');
    expect(await inbox.redeliverDue('ethereum')).toBe(0);
  });

  it('a session that does not exist turns the deposit into an orphan (unknown_address)', async () => {
    const actor = fakeActor();
    const inbox = inboxWith(actor);
    const doc = await inbox.record(found(), target);
    expect(await inbox.deliver(doc!.id, doc!)).toBe(true);
    expect(await store.get<DepositDoc>('deposits', doc!.id)).toEqual(
      expect.objectContaining({ status: 'orphan', orphan_reason: 'unknown_address', delivered: true }),
    );
  });

  it('a revert racing an in-flight credit: the session ends with the deposit taken back', async () => {
    const actor = fakeActor();
    actor.states.set('ps_1', sessionState('ps_1'));
    const inbox = inboxWith(actor);
    const doc = await inbox.record(found(), target);
    const release = actor.holdNextCredit();
    const slowCredit = inbox.deliver(doc!.id, doc!);
    // meanwhile the block leaves the chain: stored as reverted, revert delivered (a no-op: the credit is not there yet)
    const reverted = await inbox.revertAbove('ethereum', 'testnet', 9);
    expect(reverted.map((d) => d.id)).toEqual([doc!.id]);
    expect(await inbox.deliver(doc!.id)).toBe(true);
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
    const inbox = inboxWith(actor);
    const first = await inbox.record(found(), target);
    await inbox.deliver(first!.id, first!);
    for (const d of await inbox.revertAbove('ethereum', 'testnet', 9)) await inbox.deliver(d.id, d);
    expect(actor.states.get('ps_1')!.status).toBe('pending');
    // below the fork nothing is touched
    expect(await inbox.revertAbove('ethereum', 'testnet', 10)).toEqual([]);
    const again = await inbox.record(found({ block_number: 11, block_hash: '0xb11' }), target);
    expect(again).toEqual(expect.objectContaining({ id: first!.id, status: 'seen', block_number: 11, reverted_at: null }));
    await inbox.deliver(again!.id, again!);
    const s = actor.states.get('ps_1')!;
    expect(s.status).toBe('completed');
    expect(s.deposits).toEqual([expect.objectContaining({ key: first!.id, reverted: false, block_number: 11 })]);
    expect(await store.get<DepositDoc>('deposits', first!.id)).toEqual(
      expect.objectContaining({ status: 'credited', block_hash: '0xb11' }),
    );
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
    store.write([
      {
        op: 'insert',
        coll: 'payment_sessions',
        doc: { id, chain, network: 'testnet', token: 'USDC', address, expires_at: new Date(expiresMs).toISOString() },
      },
    ]);

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

  it('numbers every address it learns (incremental refresh or full reload), keeping the number of one it knew', async () => {
    const wall = Date.now();
    const now = wall;
    const book = new SessionAddressBook(store, 'ethereum', {
      keepAfterExpiryMs: 60_000,
      now: () => new Date(now),
      overlapMs: 5000,
      fullReloadMs: 60_000,
    });
    await put(`${sessionIdAt(wall - 1000)}aaaaaaaaaaaaaaaa`, '0xA1', now + 3_600_000);
    await book.refresh();
    expect(book.get('0xA1')!.seq).toBe(1);
    expect(book.lastSeq).toBe(1);
    // written late by a node whose clock is 10 minutes behind: the incremental refresh misses it
    await put(`${sessionIdAt(wall - 600_000)}bbbbbbbbbbbbbbbb`, '0xB2', now + 3_600_000);
    await book.refresh();
    expect(book.has('0xB2')).toBe(false);
    expect(book.lastSeq).toBe(1);
    // the full reload finds it as a new entry; the known one keeps its number
    const spy = jest.spyOn(Date, 'now').mockReturnValue(wall + 61_000);
    try {
      await book.refresh();
    } finally {
      spy.mockRestore();
    }
    expect(book.get('0xA1')!.seq).toBe(1);
    expect(book.get('0xB2')!.seq).toBe(2);
    expect(
      book
        .entries()
        .filter((e) => e.seq > 1)
        .map((e) => e.address),
    ).toEqual(['0xB2']);
  });
});

describe('Ethereum backfill window', () => {
  // a chain of blocks 0..99, block n at time 1000 + 12 n seconds; one USDC transfer to bob in block 40
  const bob = getAddress('0x0000000000000000000000000000000000000b0b');
  const usdc = getAddress('0x000000000000000000000000000000000000dc01');
  const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
  const calls = { headers: 0, logs: [] as Array<[number, number]>, full: 0 };
  const chain: BackfillChain = {
    network: 'testnet',
    usdc,
    block: async (n, full) => {
      if (full) calls.full++;
      else calls.headers++;
      return n >= 0 && n < 100
        ? {
            number: `0x${n.toString(16)}`,
            hash: hash(n),
            parentHash: hash(n - 1),
            timestamp: `0x${(1000 + 12 * n).toString(16)}`,
            transactions: [],
          }
        : null;
    },
    logs: async (filter, from, to) => {
      calls.logs.push([from, to]);
      expect(filter.topics?.[2]).toEqual([addressTopic(bob)]);
      return 40 >= from && 40 <= to
        ? [
            {
              address: usdc,
              topics: [TRANSFER_TOPIC, addressTopic(usdc), addressTopic(bob)],
              data: `0x${5n.toString(16).padStart(64, '0')}`,
              blockNumber: 40,
              blockHash: hash(40),
              transactionHash: hash(999),
              index: 3,
            },
          ]
        : [];
    },
    receipt: async () => null,
  };
  const entry = (createdS: number | null, token = 'USDC'): WatchedAddress => ({
    session_id: 'ps_x',
    address: bob,
    network: 'testnet',
    token,
    expires_ms: Infinity,
    until_ms: Infinity,
    created_ms: createdS === null ? null : createdS * 1000,
    seq: 1,
  });
  const limits = { marginMs: 24_000, maxBlocks: 50, maxEthBlocks: 10, topicMax: 500, parallel: 4 };
  beforeEach(() => {
    calls.headers = 0;
    calls.logs = [];
    calls.full = 0;
  });

  it('starts at the first processed block at or after created_at − margin and finds the missed transfer', async () => {
    // created at the time of block 42, margin 2 blocks: the window is 40..90
    const { found, stats } = await findMissedDeposits(chain, [entry(1000 + 12 * 42)], { block: 90, hashes: [] }, 95, {
      ...limits,
      maxBlocks: 60,
    });
    expect([stats.from, stats.to]).toEqual([40, 90]);
    expect(calls.logs).toEqual([[40, 90]]);
    expect(calls.headers).toBeLessThanOrEqual(8); // a binary search, not a walk
    expect(found).toEqual([
      expect.objectContaining({ tx_hash: hash(999), index: 3, token: 'USDC', amount_subunits: '5', block_number: 40, confirmations: 56 }),
    ]);
    expect(calls.full).toBe(0); // no ETH session: no full block reads
  });

  it('is capped at maxBlocks below the cursor, ETH at maxEthBlocks, and empty for a session newer than the cursor', async () => {
    const old = await findMissedDeposits(chain, [entry(null, 'ETH')], { block: 90, hashes: [] }, 95, limits);
    expect([old.stats.from, old.stats.to, old.stats.eth_from]).toEqual([41, 90, 81]);
    expect(calls.full).toBe(10);
    expect(old.found).toEqual([]);
    const kept: Array<[number, string, number]> = [
      [89, hash(89), 1000 + 12 * 89],
      [90, hash(90), 1000 + 12 * 90],
    ];
    calls.headers = 0;
    const fresh = await findMissedDeposits(chain, [entry(1000 + 12 * 99)], { block: 90, hashes: kept }, 95, limits);
    expect(fresh.stats.from).toBe(91);
    expect(fresh.found).toEqual([]);
    expect(calls.headers).toBe(0); // the cursor's block time was kept: no RPC for a fresh session
  });
});
