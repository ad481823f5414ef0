/**
 * Payment sessions through HTTP: creation on every enabled rail, every refusal, reading, demo sessions,
 * simulation (and its refusals in /metrics), caps, the catalog checkout check, expiry and address
 * uniqueness.
 */
import { creditViaInbox, plantDeposit } from '../helpers/deposits.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { SERVICE_FACTORIES } from '../../services/index.ts';
import { ETH_USDC, SOL_USDC, abuseCount, eventually, liveMerchant, merchant } from './sessions-helpers.ts';

const USDC_CONTRACT = '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238';
const USDC_MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const ETH_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SOL_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

describe('payment sessions over HTTP', () => {
  let t: TestNode;
  let sandbox: RegisteredMerchant;
  let other: RegisteredMerchant;
  const create = (key: string, body: unknown) => t.request('POST', '/v1/payment_sessions', { key, body });
  const ok = (over: Record<string, unknown> = {}) => ({ amount: 12.5, expires_in: '15m', paymentMethod: ETH_USDC, ...over });

  beforeAll(async () => {
    t = await startTestNode({
      // a mainnet rail exists only with its RPC URL; nothing listens there in this test
      ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9',
      ETHEREUM_TESTNET_USDC_ADDRESS: USDC_CONTRACT,
      SOLANA_TESTNET_USDC_MINT: USDC_MINT,
      PUBLIC_URL: 'https://pay.example.com',
    });
    sandbox = await merchant(t);
    other = await merchant(t);
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('create', () => {
    it('creates a session on every enabled rail, with every PaymentSession field', async () => {
      const rails = (await t.request('GET', '/v1/payment_methods')).body as Array<{
        chain: string;
        network: string;
        token: string;
        decimals: number;
      }>;
      expect(rails.some((r) => r.network === 'mainnet')).toBe(true);
      const live = await liveMerchant(t, 'verified');
      for (const rail of rails) {
        const key = rail.network === 'mainnet' ? live.apiKey : sandbox.apiKey;
        const paymentMethod = { methodID: 0, chain: rail.chain, network: rail.network, token: rail.token };
        const res = await create(key, { amount: 1, expires_in: '45m', paymentMethod, metadata: { order: 'A-1' } });
        expect(res.status).toBe(201);
        const s = res.body;
        expect(res.headers.get('location')).toBe(`/v1/payment_sessions/${s.session_id}`);
        expect(s).toMatchObject({
          merchant_id: rail.network === 'mainnet' ? live.id : sandbox.id,
          expected_amount: 1,
          received_amount: 0,
          status: 'pending',
          metadata: { order: 'A-1' },
          demo: false,
          currency: rail.token,
          paymentMethod,
          deposits: [],
          expected_amount_subunits: `1${'0'.repeat(rail.decimals)}`,
          received_amount_subunits: '0',
          payment_url: `https://pay.example.com/checkout/${s.session_id}`,
        });
        expect(s.session_id).toMatch(/^ps_/);
        expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(45 * 60_000);
        expect(s.updated_at).toBe(s.created_at);
        expect(s.completed_at).toBeUndefined();
        if (rail.chain === 'ethereum') {
          expect(s.address).toMatch(ETH_ADDRESS);
          const chainId = rail.network === 'mainnet' ? 1 : 11155111;
          expect(s.qr_data).toBe(
            rail.token === 'ETH'
              ? `ethereum:${s.address}@${chainId}?value=1000000000000000000`
              : rail.network === 'testnet'
                ? `ethereum:${USDC_CONTRACT}@${chainId}/transfer?address=${s.address}&uint256=1000000`
                : `ethereum:${s.address}@${chainId}`,
          );
          // mainnet's RPC URL here is a loopback address: a local chain, which no public explorer knows
          expect(s.explorer_url).toBe(rail.network === 'mainnet' ? undefined : `https://sepolia.etherscan.io/address/${s.address}`);
        } else {
          expect(s.address).toMatch(SOL_ADDRESS);
          expect(s.qr_data).toBe(
            rail.token === 'SOL' ? `solana:${s.address}?amount=1` : `solana:${s.address}?amount=1&spl-token=${USDC_MINT}`,
          );
          expect(s.explorer_url).toBe(`https://explorer.solana.com/address/${s.address}?cluster=devnet`);
        }
      }
    });

    it('accepts the legacy payment_method key, the bounds of expires_in and metadata of exactly 4KB', async () => {
      expect((await create(sandbox.apiKey, { amount: 1, expires_in: '1h', payment_method: SOL_USDC })).status).toBe(201);
      expect(
        (await create(sandbox.apiKey, { amount: 1, expires_in: '1h', payment_method: SOL_USDC, paymentMethod: SOL_USDC })).status,
      ).toBe(201);
      // the same rail written in another key order is the same rail
      const reordered = { token: 'USDC', network: 'testnet', chain: 'solana', methodID: 0 };
      expect(
        (await create(sandbox.apiKey, { amount: 1, expires_in: '1h', payment_method: reordered, paymentMethod: SOL_USDC })).status,
      ).toBe(201);
      for (const expires_in of ['10s', '15m', '45m', '1h', '7d'])
        expect((await create(sandbox.apiKey, ok({ expires_in }))).status).toBe(201);
      const filler = 'x'.repeat(4096 - JSON.stringify({ note: '' }).length);
      expect((await create(sandbox.apiKey, ok({ metadata: { note: filler } }))).status).toBe(201);
      expect((await create(sandbox.apiKey, ok({ amount: 0.01 }))).body.expected_amount).toBe(0.01);
      expect((await create(sandbox.apiKey, ok({ amount: 0.123456 }))).body.expected_amount_subunits).toBe('123456');
    });

    const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
      ['an unknown field', { ...ok(), currency: 'USDC' }, /unknown field 'currency'/],
      ['an unknown field in paymentMethod', ok({ paymentMethod: { ...ETH_USDC, memo: 'x' } }), /unknown field 'memo'/],
      ['a missing amount', { expires_in: '15m', paymentMethod: ETH_USDC }, /amount is required/],
      ['a string amount', ok({ amount: '12.5' }), /amount must be of type number/],
      ['a zero amount', ok({ amount: 0 }), /amount/],
      ['a negative amount', ok({ amount: -1 }), /amount/],
      ['a missing expires_in', { amount: 1, paymentMethod: ETH_USDC }, /expires_in is required/],
      ['expires_in without unit', ok({ expires_in: '15' }), /expires_in must be a duration such as 15m/],
      ['expires_in in weeks', ok({ expires_in: '1w' }), /expires_in must be a duration/],
      ['expires_in below 10s', ok({ expires_in: '9s' }), /expires_in must be between 10s and 7d/],
      ['expires_in of zero', ok({ expires_in: '0m' }), /expires_in must be between 10s and 7d/],
      ['expires_in above 7d', ok({ expires_in: '8d' }), /expires_in must be between 10s and 7d/],
      ['a number expires_in', ok({ expires_in: 900 }), /expires_in must be of type string/],
      ['no paymentMethod', { amount: 1, expires_in: '15m' }, /paymentMethod is required/],
      ['paymentMethod and payment_method that differ', ok({ payment_method: SOL_USDC }), /differ/],
      ['paymentMethod without network', ok({ paymentMethod: { methodID: 0, chain: 'ethereum', token: 'USDC' } }), /network is required/],
      ['methodID 1 (fiat)', ok({ paymentMethod: { ...ETH_USDC, methodID: 1 } }), /fiat/],
      ['methodID 2', ok({ paymentMethod: { ...ETH_USDC, methodID: 2 } }), /methodID must be one of 0, 1/],
      ['an unknown chain', ok({ paymentMethod: { ...ETH_USDC, chain: 'bitcoin' } }), /no enabled rail is bitcoin:testnet:USDC/],
      [
        'a token of another chain (triple, not token)',
        ok({ paymentMethod: { ...ETH_USDC, token: 'SOL' } }),
        /no enabled rail is ethereum:testnet:SOL/,
      ],
      [
        'a mainnet rail that is not enabled',
        ok({ paymentMethod: { ...SOL_USDC, network: 'mainnet' } }),
        /no enabled rail is solana:mainnet:USDC/,
      ],
      ['a network outside testnet/mainnet', ok({ paymentMethod: { ...ETH_USDC, network: 'devnet' } }), /network must be one of/],
      ['more decimals than USDC has', ok({ amount: 1.1234567 }), /more decimal places than USDC.*\(6\)/],
      [
        'more decimals than SOL has',
        ok({ amount: 0.0000000001, paymentMethod: { ...SOL_USDC, token: 'SOL' } }),
        /more decimal places than SOL/,
      ],
      ['an amount below min_amount', ok({ amount: 0.009 }), /below the minimum of 0.01 USDC/],
      ['metadata above 4KB', ok({ metadata: { note: 'x'.repeat(4097) } }), /metadata is larger than 4KB/],
      ['metadata that is not an object', ok({ metadata: ['a'] }), /metadata must be of type object/],
      [
        'a checkout_reference_id that is not a string',
        ok({ metadata: { checkout_reference_id: 7 } }),
        /checkout_reference_id must be a non-empty string/,
      ],
    ];

    it.each(refusals)(
      'refuses %s with 400 code 3 and a message that says what to change, creating nothing',
      async (_name, body, message) => {
        const before = await t.node.rt.store.count('payment_sessions', {});
        const res = await create(sandbox.apiKey, body);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe(3);
        expect(res.body.message).toMatch(message);
        expect(await t.node.rt.store.count('payment_sessions', {})).toBe(before);
      },
    );

    it('refuses a body that is not JSON and a call without a key', async () => {
      const raw = await t.request('POST', '/v1/payment_sessions', {
        key: sandbox.apiKey,
        raw: '{',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(raw.status).toBe(400);
      const anon = await t.request('POST', '/v1/payment_sessions', { body: ok() });
      expect(anon.status).toBe(401);
      expect(anon.body).toMatchObject({ code: 7, message: 'missing or invalid authorization header' });
    });

    it('keeps sandbox merchants on testnet and gates mainnet behind KYC (abuse_signal_total mainnet_kyc_required)', async () => {
      const mainnet = { ...ETH_USDC, network: 'mainnet' };
      const sandboxBefore = await abuseCount(t, { signal: 'limit_violation', outcome: 'mainnet_kyc_required', environment: 'sandbox' });
      const res = await create(sandbox.apiKey, ok({ paymentMethod: mainnet }));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 7, message: expect.stringMatching(/sandbox merchants can use testnet rails only/) });
      expect(await abuseCount(t, { signal: 'limit_violation', outcome: 'mainnet_kyc_required', environment: 'sandbox' })).toBe(
        sandboxBefore + 1,
      );

      const live = await liveMerchant(t);
      const liveBefore = await abuseCount(t, {
        signal: 'limit_violation',
        outcome: 'mainnet_kyc_required',
        environment: 'live',
        chain: 'ethereum',
        network: 'mainnet',
        token: 'USDC',
      });
      const gated = await create(live.apiKey, ok({ paymentMethod: mainnet }));
      expect(gated.status).toBe(403);
      expect(gated.body.message).toMatch(/mainnet payment sessions require KYC verification/);
      expect(
        await abuseCount(t, {
          signal: 'limit_violation',
          outcome: 'mainnet_kyc_required',
          environment: 'live',
          chain: 'ethereum',
          network: 'mainnet',
          token: 'USDC',
        }),
      ).toBe(liveBefore + 1);
      // a live merchant is never paid in (free) testnet tokens, KYC or not
      const liveTestnet = await create(live.apiKey, ok());
      expect(liveTestnet.status).toBe(403);
      expect(liveTestnet.body).toMatchObject({ code: 7, message: expect.stringMatching(/live merchants are paid on mainnet rails only/) });
      await t.call('operators.setKyc', { merchant_id: live.id, status: 'pending' });
      expect((await create(live.apiKey, ok({ paymentMethod: mainnet }))).status).toBe(403);
      await t.call('operators.setKyc', { merchant_id: live.id, status: 'verified' });
      const allowed = await create(live.apiKey, ok({ paymentMethod: mainnet }));
      expect(allowed.status).toBe(201);
      expect(allowed.body.paymentMethod).toEqual(mainnet);
      expect((await create(live.apiKey, ok())).status).toBe(403);
    });

    it('gives every session its own address, across rails and concurrent requests', async () => {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          create(sandbox.apiKey, ok({ paymentMethod: i % 2 ? SOL_USDC : { ...ETH_USDC, token: i % 3 ? 'USDC' : 'ETH' }, amount: 1 })),
        ),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
      const all = await t.node.rt.store.find<{ id: string; address: string; chain: string }>('payment_sessions', {});
      const eth = all.filter((s) => s.chain === 'ethereum').map((s) => s.address);
      const sol = all.filter((s) => s.chain === 'solana').map((s) => s.address);
      expect(new Set(eth).size).toBe(eth.length);
      expect(new Set(sol).size).toBe(sol.length);
    });
  });

  describe('Idempotency-Key', () => {
    const withKey = (key: string, idem: string, body: unknown) =>
      t.request('POST', '/v1/payment_sessions', { key, body, headers: { 'Idempotency-Key': idem } });

    it('answers a retried request with the session the first one created; another payload is 409', async () => {
      const first = await withKey(sandbox.apiKey, 'order-1001', ok({ metadata: { order: 1001 } }));
      expect(first.status).toBe(201);
      const retry = await withKey(sandbox.apiKey, 'order-1001', {
        metadata: { order: 1001 },
        paymentMethod: ETH_USDC,
        expires_in: '15m',
        amount: 12.5,
      });
      expect(retry.status).toBe(201);
      expect(retry.body.session_id).toBe(first.body.session_id);
      expect(retry.headers.get('location')).toBe(`/v1/payment_sessions/${first.body.session_id}`);
      const changed = await withKey(sandbox.apiKey, 'order-1001', ok({ amount: 13 }));
      expect(changed.status).toBe(409);
      expect(changed.body).toMatchObject({ code: 5, message: 'idempotency key was already used with a different payload' });
      // keys are scoped to the merchant
      const theirs = await withKey(other.apiKey, 'order-1001', ok({ metadata: { order: 1001 } }));
      expect(theirs.status).toBe(201);
      expect(theirs.body.session_id).not.toBe(first.body.session_id);
      expect((await withKey(sandbox.apiKey, 'x'.repeat(256), ok())).status).toBe(400);
    });

    it('creates one session for concurrent requests with one key', async () => {
      const before = await t.node.rt.store.count('payment_sessions', { merchant_id: other.id });
      const results = await Promise.all(Array.from({ length: 8 }, () => withKey(other.apiKey, 'burst-7', ok({ amount: 7 }))));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
      expect(new Set(results.map((r) => r.body.session_id)).size).toBe(1);
      expect(await t.node.rt.store.count('payment_sessions', { merchant_id: other.id })).toBe(before + 1);
    });

    it('frees the key when the creation is refused', async () => {
      const mainnet = await withKey(sandbox.apiKey, 'retry-after-fix', ok({ paymentMethod: { ...ETH_USDC, network: 'mainnet' } }));
      expect(mainnet.status).toBe(403);
      expect((await withKey(sandbox.apiKey, 'retry-after-fix', ok())).status).toBe(201);
    });
  });

  describe('read', () => {
    it('answers the owner, hides the session from another merchant (404) and from anonymous callers (401)', async () => {
      const s = (await create(sandbox.apiKey, ok({ metadata: { cart: 9 } }))).body;
      const mine = await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: sandbox.apiKey });
      expect(mine.status).toBe(200);
      expect(mine.body).toEqual(s);
      const theirs = await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: other.apiKey });
      expect(theirs.status).toBe(404);
      expect(theirs.body.code).toBe(2);
      expect((await t.request('GET', '/v1/payment_sessions/ps_doesnotexist', { key: sandbox.apiKey })).status).toBe(404);
      const anon = await t.request('GET', `/v1/payment_sessions/${s.session_id}`);
      expect(anon.status).toBe(401);
      expect(anon.body.code).toBe(7);
      expect((await t.request('GET', '/v1/payment_sessions/ps_doesnotexist')).status).toBe(401);
      expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: 'service_sk_test_wrong' })).status).toBe(401);
    });

    it('shows credited deposits (tx hash, amount, confirmations, late flag) and links the explorer to the paying transaction', async () => {
      const s = (await create(sandbox.apiKey, ok({ amount: 10 }))).body;
      const deposit = {
        key: `ethereum:testnet:0xaa:0`,
        tx_hash: '0xaa',
        index: 0,
        amount_subunits: '4000000',
        token: 'USDC',
        confirmations: 3,
        block_number: 10,
        detected_at: new Date().toISOString(),
      };
      await creditViaInbox(t, s.session_id, deposit);
      const res = await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: sandbox.apiKey });
      expect(res.body).toMatchObject({
        status: 'partial_paid',
        received_amount: 4,
        received_amount_subunits: '4000000',
        explorer_url: 'https://sepolia.etherscan.io/tx/0xaa',
      });
      expect(res.body.deposits).toEqual([
        expect.objectContaining({
          tx_hash: '0xaa',
          amount: 4,
          amount_subunits: '4000000',
          confirmations: 3,
          late: false,
          reverted: false,
          simulated: false,
        }),
      ]);
      const events = await t.node.rt.store.find<{ id: string; event_type: string }>('webhook_events', { session_id: s.session_id });
      expect(events.map((e) => e.event_type)).toEqual(['payment_session.partial_paid']);
    });

    it('credits only deposits recorded in the deposit inbox: a forged credit message cannot invent or inflate money', async () => {
      const s = (await create(sandbox.apiKey, ok({ amount: 10 }))).body;
      const forged = {
        key: 'ethereum:testnet:0xf0:0',
        tx_hash: '0xf0',
        index: 0,
        amount_subunits: '10000000',
        token: 'USDC',
        confirmations: 99,
        detected_at: new Date().toISOString(),
      };
      // a key the inbox never recorded
      await expect(t.call('session-actors.send', { id: s.session_id, msg: { type: 'credit', deposit: forged } })).rejects.toMatchObject({
        code: 409,
      });
      // another session's deposit
      const other = (await create(sandbox.apiKey, ok({ amount: 10 }))).body;
      await plantDeposit(t.node.rt.store, other.session_id, {
        ...forged,
        key: 'ethereum:testnet:0xf1:0',
        tx_hash: '0xf1',
        amount_subunits: '1000000',
      });
      await expect(
        t.call('session-actors.send', { id: s.session_id, msg: { type: 'credit', key: 'ethereum:testnet:0xf1:0' } }),
      ).rejects.toMatchObject({ code: 409 });
      // a real deposit of 1 USDC, claimed as 10 in the message: the record's amount counts
      await plantDeposit(t.node.rt.store, s.session_id, {
        ...forged,
        key: 'ethereum:testnet:0xf2:0',
        tx_hash: '0xf2',
        amount_subunits: '1000000',
      });
      await t.call('session-actors.send', {
        id: s.session_id,
        msg: { type: 'credit', deposit: { ...forged, key: 'ethereum:testnet:0xf2:0' } },
      });
      const res = (await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: sandbox.apiKey })).body;
      expect(res).toMatchObject({ status: 'partial_paid', received_amount_subunits: '1000000' });
      expect(res.deposits.map((d: { tx_hash: string }) => d.tx_hash)).toEqual(['0xf2']);
      // a revert of a deposit the inbox has not reverted is read as what the record owes: the credit, already counted
      await expect(
        t.call('session-actors.send', { id: s.session_id, msg: { type: 'revert', key: 'ethereum:testnet:0xf2:0' } }),
      ).resolves.toMatchObject({ credit: 'duplicate' });
      expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: sandbox.apiKey })).body.received_amount_subunits).toBe(
        '1000000',
      );
    });
  });

  describe('demo sessions and simulate', () => {
    it('creates a public demo session with defaults, readable and completable without credentials', async () => {
      const res = await t.request('POST', '/v1/payment_sessions/demo');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        demo: true,
        merchant_id: 'demo',
        status: 'pending',
        expected_amount: 1,
        currency: 'USDC',
        paymentMethod: { methodID: 0, network: 'testnet', token: 'USDC' },
      });
      const id = res.body.session_id;
      expect((await t.request('GET', `/v1/payment_sessions/${id}`)).body.status).toBe('pending');
      // any merchant may read a demo session too
      expect((await t.request('GET', `/v1/payment_sessions/${id}`, { key: other.apiKey })).status).toBe(200);
      const sim = await t.request('POST', `/v1/payment_sessions/${id}/simulate`);
      expect(sim.status).toBe(200);
      expect(sim.body).toMatchObject({ session_id: id, status: 'completed', received_amount: 1, demo: true });
      expect(sim.body.completed_at).toEqual(expect.any(String));
      expect((await t.request('GET', `/v1/payment_sessions/${id}`)).body.status).toBe('completed');
      // demo sessions belong to no merchant: no webhook row
      expect(await t.node.rt.store.count('webhook_events', { session_id: id })).toBe(0);
    });

    it('creates demo sessions on a chosen testnet rail and refuses anything else', async () => {
      const sol = await t.request('POST', '/v1/payment_sessions/demo', {
        body: { chain: 'solana', token: 'SOL', network: 'testnet', amount: 0.5 },
      });
      expect(sol.status).toBe(201);
      expect(sol.body).toMatchObject({
        expected_amount: 0.5,
        currency: 'SOL',
        paymentMethod: { chain: 'solana', network: 'testnet', token: 'SOL' },
      });
      expect(sol.body.address).toMatch(SOL_ADDRESS);
      const eth = await t.request('POST', '/v1/payment_sessions/demo', { body: { chain: 'ethereum', token: 'ETH' } });
      expect(eth.body).toMatchObject({ expected_amount: 0.001, currency: 'ETH' });
      expect((await t.request('POST', '/v1/payment_sessions/demo', { body: { network: 'mainnet' } })).status).toBe(400);
      const huge = await t.request('POST', '/v1/payment_sessions/demo', { body: { amount: 5000 } });
      expect(huge.status).toBe(400);
      expect(huge.body).toMatchObject({ code: 3, message: 'demo sessions take at most 1000 USDC' });
      const absurd = await t.request('POST', '/v1/payment_sessions/demo', { body: { amount: 1e300 } });
      expect(absurd.body).toMatchObject({ code: 3, message: 'amount is larger than the maximum of 1000000000000000 token units' });
      expect((await t.request('POST', '/v1/payment_sessions/demo', { body: { chain: 'bitcoin' } })).body.message).toMatch(
        /no testnet rail matches/,
      );
      expect((await t.request('POST', '/v1/payment_sessions/demo', { body: { amount: 1.1234567 } })).status).toBe(400);
      expect((await t.request('POST', '/v1/payment_sessions/demo', { body: { merchant_id: 'x' } })).body.message).toMatch(/unknown field/);
      expect((await t.request('POST', '/v1/payment_sessions/demo', { body: { expires_in: '2h' } })).body.message).toMatch(
        /between 10s and 1h/,
      );
    });

    it("completes the sandbox merchant's own pending session; the completed webhook row is written with it", async () => {
      const s = (await create(sandbox.apiKey, ok())).body;
      const sim = await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: sandbox.apiKey });
      expect(sim.status).toBe(200);
      expect(sim.body).toMatchObject({
        status: 'completed',
        received_amount: 12.5,
        deposits: [expect.objectContaining({ simulated: true, tx_hash: null, amount: 12.5 })],
      });
      const events = await t.node.rt.store.find<{ id: string; event_type: string; body: Record<string, unknown> }>('webhook_events', {
        session_id: s.session_id,
      });
      expect(events.map((e) => e.event_type)).toEqual(['payment_session.completed']);
      expect(events[0].body).toMatchObject({
        session_id: s.session_id,
        status: 'completed',
        amount: 12.5,
        currency: 'USDC',
        chain: 'ethereum',
        network: 'testnet',
      });
    });

    it('refuses simulate on non-demo sessions and on sessions that are not pending, counting simulation_abuse', async () => {
      const count = (outcome: string, environment: string) => abuseCount(t, { signal: 'simulation_abuse', outcome, environment });
      const base = {
        sandboxNonDemo: await count('blocked_non_demo', 'sandbox'),
        liveNonDemo: await count('blocked_non_demo', 'live'),
        sandboxNonPending: await count('blocked_non_pending', 'sandbox'),
        demoNonPending: await count('blocked_non_pending', 'demo'),
      };
      const s = (await create(sandbox.apiKey, ok())).body;
      // without credentials a sandbox session is not a demo session, and the answer is the one for an
      // unknown id: an anonymous caller cannot learn which session ids exist
      const anon = await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`);
      const unknown = await t.request('POST', `/v1/payment_sessions/ps_${s.session_id.slice(3, -4)}zzzz/simulate`);
      expect(anon.status).toBe(404);
      expect({ ...anon.body, request_id: '' }).toEqual({ ...unknown.body, request_id: '' });
      expect(unknown.status).toBe(404);
      // another merchant: as unknown as on GET
      expect((await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: other.apiKey })).status).toBe(404);
      // a live merchant's own session
      const live = await liveMerchant(t, 'verified');
      const ls = (await create(live.apiKey, ok({ paymentMethod: { ...ETH_USDC, network: 'mainnet' } }))).body;
      const liveSim = await t.request('POST', `/v1/payment_sessions/${ls.session_id}/simulate`, { key: live.apiKey });
      expect(liveSim.status).toBe(403);
      expect(liveSim.body.message).toMatch(/simulate works only on demo sessions and sandbox sessions/);
      expect((await t.request('GET', `/v1/payment_sessions/${ls.session_id}`, { key: live.apiKey })).body.status).toBe('pending');
      // not pending any more
      expect((await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: sandbox.apiKey })).status).toBe(200);
      const again = await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: sandbox.apiKey });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({
        code: 5,
        message: 'the session is completed; simulate completes only pending or partially paid sessions',
      });
      const demo = (await t.request('POST', '/v1/payment_sessions/demo')).body;
      expect((await t.request('POST', `/v1/payment_sessions/${demo.session_id}/simulate`)).status).toBe(200);
      expect((await t.request('POST', `/v1/payment_sessions/${demo.session_id}/simulate`)).status).toBe(409);
      expect((await t.request('POST', '/v1/payment_sessions/ps_doesnotexist/simulate')).status).toBe(404);

      expect(await count('blocked_non_demo', 'sandbox')).toBe(base.sandboxNonDemo + 2);
      expect(await count('blocked_non_demo', 'live')).toBe(base.liveNonDemo + 1);
      expect(await count('blocked_non_pending', 'sandbox')).toBe(base.sandboxNonPending + 1);
      expect(await count('blocked_non_pending', 'demo')).toBe(base.demoNonPending + 1);
      const text = await (await fetch(`${t.url}/metrics`)).text();
      expect(text).toMatch(
        /abuse_signal_total\{signal="simulation_abuse",outcome="blocked_non_demo",environment="sandbox",chain="ethereum",network="testnet",token="USDC"\} \d+/,
      );
      // never a session id or merchant id in a label
      expect(text).not.toContain(s.session_id);
      expect(text).not.toContain(sandbox.id);
    });

    it('completes a partially paid sandbox session', async () => {
      const s = (await create(sandbox.apiKey, ok({ amount: 10 }))).body;
      await creditViaInbox(t, s.session_id, {
        key: 'ethereum:testnet:0xbb:1',
        tx_hash: '0xbb',
        index: 1,
        amount_subunits: '2500000',
        token: 'USDC',
        confirmations: 2,
        detected_at: new Date().toISOString(),
      });
      const sim = await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: sandbox.apiKey });
      expect(sim.body).toMatchObject({ status: 'completed', received_amount: 10 });
      expect(sim.body.deposits.map((d: { amount_subunits: string; simulated: boolean }) => [d.amount_subunits, d.simulated])).toEqual([
        ['2500000', false],
        ['7500000', true],
      ]);
    });
  });
});

describe('payment session caps', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ SESSION_AMOUNT_LIMIT: '100', DAILY_VOLUME_LIMIT: '250' });
  });
  afterAll(async () => {
    await t.stop();
  });
  const create = (key: string, amount: number, paymentMethod = ETH_USDC) =>
    t.request('POST', '/v1/payment_sessions', { key, body: { amount, expires_in: '15m', paymentMethod } });

  it('refuses an amount above SESSION_AMOUNT_LIMIT (amount_limit_exceeded)', async () => {
    const m = await merchant(t);
    const before = await abuseCount(t, { signal: 'limit_violation', outcome: 'amount_limit_exceeded', environment: 'sandbox' });
    expect((await create(m.apiKey, 100)).status).toBe(201);
    const res = await create(m.apiKey, 100.000001);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/exceeds the per-session limit of 100 USDC/);
    expect(
      await abuseCount(t, {
        signal: 'limit_violation',
        outcome: 'amount_limit_exceeded',
        environment: 'sandbox',
        chain: 'ethereum',
        network: 'testnet',
        token: 'USDC',
      }),
    ).toBe(before + 1);
  });

  it('caps the daily volume per merchant and rail exactly (daily_volume_limit_exceeded)', async () => {
    const m = await merchant(t);
    const before = await abuseCount(t, { signal: 'limit_violation', outcome: 'daily_volume_limit_exceeded' });
    expect((await create(m.apiKey, 100)).status).toBe(201);
    expect((await create(m.apiKey, 100)).status).toBe(201);
    const over = await create(m.apiKey, 50.000001);
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/daily volume limit of 250 USDC on ethereum testnet reached: 50 USDC left/);
    // refused after its Idempotency-Key was reserved: the key is free again
    const keyed = (amount: number) =>
      t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        headers: { 'Idempotency-Key': 'cap-1' },
        body: { amount, expires_in: '15m', paymentMethod: ETH_USDC },
      });
    expect((await keyed(60)).status).toBe(400);
    expect((await keyed(50)).status).toBe(201); // exactly the cap
    expect((await create(m.apiKey, 0.01)).status).toBe(400);
    // another rail and another merchant have their own volume
    expect((await create(m.apiKey, 100, SOL_USDC)).status).toBe(201);
    expect((await create((await merchant(t)).apiKey, 100)).status).toBe(201);
    expect(await abuseCount(t, { signal: 'limit_violation', outcome: 'daily_volume_limit_exceeded' })).toBe(before + 3);
  });

  it('holds under concurrent creations (no more than the cap is ever granted)', async () => {
    const m = await merchant(t);
    const results = await Promise.all(Array.from({ length: 12 }, () => create(m.apiKey, 30)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(8); // 8 × 30 = 240 ≤ 250 < 270
    expect(results.filter((r) => r.status === 400)).toHaveLength(4);
    const vol = await t.node.rt.store.find<{ id: string; sum_subunits: string }>('session_volume', { merchant_id: m.id });
    expect(vol.map((v) => v.sum_subunits)).toEqual(['240000000']);
  });

  it('sums 18-decimal amounts exactly', async () => {
    const m = await merchant(t);
    const ETH = { ...ETH_USDC, token: 'ETH' };
    for (const amount of [100, 100, 49.99999]) expect((await create(m.apiKey, amount, ETH)).status).toBe(201);
    const vol = await t.node.rt.store.findOne<{ id: string; sum_subunits: string }>('session_volume', { merchant_id: m.id });
    expect(vol!.sum_subunits).toBe('249999990000000000000');
    // 0.00001 ETH is left: 100 wei more is refused, the rest itself is accepted
    expect((await create(m.apiKey, 0.0000100000000001, ETH)).status).toBe(400);
    expect((await create(m.apiKey, 0.00001, ETH)).status).toBe(201);
    expect(
      (await t.node.rt.store.findOne<{ id: string; sum_subunits: string }>('session_volume', { merchant_id: m.id }))!.sum_subunits,
    ).toBe('250000000000000000000');
  });
});

describe('catalog checkout references', () => {
  let t: TestNode;
  const calls: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    // every service but the catalog, which a stub replaces
    t = await startTestNode({
      SERVICES: Object.keys(SERVICE_FACTORIES)
        .filter((n) => n !== 'catalog')
        .join(','),
    });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('fails closed while no catalog service is reachable: 503 and nothing created', async () => {
    const m = await merchant(t);
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 1, expires_in: '15m', paymentMethod: SOL_USDC, metadata: { checkout_reference_id: 'chk_any' } },
    });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe(1);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(0);
    // without a checkout reference the catalog is not needed
    expect(
      (await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 1, expires_in: '15m', paymentMethod: SOL_USDC } }))
        .status,
    ).toBe(201);
  });

  it('asks catalog.checkCheckoutReference before creating; its refusal is the answer and nothing is created', async () => {
    t.node.broker.createService({
      name: 'catalog',
      actions: {
        checkCheckoutReference(ctx) {
          calls.push({ ...(ctx.params as object) });
          if ((ctx.params as { checkout_reference_id: string }).checkout_reference_id !== 'chk_good') {
            throw Object.assign(new Error('checkout_reference_id does not match this amount and rail'), { code: 409, type: 'CONFLICT' });
          }
          return { ok: true };
        },
      },
    });
    await t.node.broker.waitForServices(['catalog']);
    const m = await merchant(t);
    const body = (ref: string) => ({ amount: 12.5, expires_in: '15m', paymentMethod: SOL_USDC, metadata: { checkout_reference_id: ref } });
    const good = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: body('chk_good') });
    expect(good.status).toBe(201);
    expect(good.body.metadata).toEqual({ checkout_reference_id: 'chk_good' });
    expect(calls[0]).toEqual({
      merchant_id: m.id,
      checkout_reference_id: 'chk_good',
      amount_subunits: '12500000',
      chain: 'solana',
      network: 'testnet',
      token: 'USDC',
    });
    const bad = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: body('chk_other') });
    expect(bad.status).toBe(409);
    expect(bad.body).toMatchObject({ code: 5, message: 'checkout_reference_id does not match this amount and rail' });
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(1);
  });
});

describe('payment session expiry', () => {
  let t: TestNode;
  let offset = 0;
  let m: RegisteredMerchant;
  beforeAll(async () => {
    t = await startTestNode(
      { SESSION_SCAN_INTERVAL_MS: '50', PUBLIC_RATE_LIMIT_PER_MINUTE: '8' },
      { now: () => new Date(Date.now() + offset) },
    );
    m = await merchant(t);
  });
  afterAll(async () => {
    await t.stop();
  });
  const create = (body: Record<string, unknown> = {}) =>
    t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 5, expires_in: '10s', paymentMethod: ETH_USDC, ...body } });
  const stored = (id: string) => t.node.rt.store.get<{ id: string; status: string; expiry_due_at: string | null }>('payment_sessions', id);

  it('the scanner expires a session at expires_at and writes one payment_session.expired row', async () => {
    const s = (await create()).body;
    const keeps = (await create({ expires_in: '1h' })).body;
    expect((await stored(s.session_id))!.expiry_due_at).toBe(s.expires_at);
    offset += 11_000;
    await eventually('the scanner to expire the session', async () => (await stored(s.session_id))?.status === 'expired');
    const events = await t.node.rt.store.find<{ id: string; event_type: string; merchant_id: string; body: Record<string, unknown> }>(
      'webhook_events',
      { session_id: s.session_id },
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event_type: 'payment_session.expired',
      merchant_id: m.id,
      body: {
        event_type: 'payment_session.expired',
        status: 'expired',
        amount: 5,
        currency: 'USDC',
        chain: 'ethereum',
        network: 'testnet',
      },
    });
    const res = await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: m.apiKey });
    expect(res.body).toMatchObject({ status: 'expired', expired_at: expect.any(String) });
    expect((await stored(s.session_id))!.expiry_due_at).toBeNull();
    expect((await stored(keeps.session_id))!.status).toBe('pending');
    // simulate after expiry is refused
    expect((await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey })).status).toBe(409);
  });

  it('a partially paid session expires too, and a late deposit is recorded without reopening it', async () => {
    const s = (await create()).body;
    await creditViaInbox(t, s.session_id, {
      key: 'ethereum:testnet:0x01:0',
      tx_hash: '0x01',
      index: 0,
      amount_subunits: '1000000',
      token: 'USDC',
      confirmations: 2,
      detected_at: t.node.rt.now().toISOString(),
    });
    offset += 11_000;
    await eventually('expiry', async () => (await stored(s.session_id))?.status === 'expired');
    await creditViaInbox(t, s.session_id, {
      key: 'ethereum:testnet:0x02:0',
      tx_hash: '0x02',
      index: 0,
      amount_subunits: '4000000',
      token: 'USDC',
      confirmations: 2,
      detected_at: t.node.rt.now().toISOString(),
    });
    const res = await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: m.apiKey });
    expect(res.body).toMatchObject({ status: 'expired', received_amount: 5 });
    expect(res.body.deposits.map((d: { tx_hash: string; late: boolean }) => [d.tx_hash, d.late])).toEqual([
      ['0x01', false],
      ['0x02', true],
    ]);
    const types = (
      await t.node.rt.store.find<{ id: string; event_type: string }>('webhook_events', { session_id: s.session_id }, { sort: 'created_at' })
    ).map((e) => e.event_type);
    expect(types).toEqual(['payment_session.partial_paid', 'payment_session.expired']);
  });

  it('a read after the deadline shows expired at once, and the transition is written once', async () => {
    const s = (await create()).body;
    offset += 11_000;
    const reads = await Promise.all(
      Array.from({ length: 5 }, () => t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: m.apiKey })),
    );
    expect(reads.map((r) => r.body.status)).toEqual(Array(5).fill('expired'));
    await new Promise((r) => setTimeout(r, 300)); // let the scanner run too
    expect(await t.node.rt.store.count('webhook_events', { session_id: s.session_id })).toBe(1);
  });

  it('limits demo sessions per client (429 past PUBLIC_RATE_LIMIT_PER_MINUTE)', async () => {
    const limit = t.node.rt.config.publicRateLimitPerMinute;
    const statuses: number[] = [];
    // a minute window may roll over once during the loop: 2 × limit + 1 requests always cross the limit
    for (let i = 0; i < 2 * limit + 1 && !statuses.includes(429); i++) {
      statuses.push((await t.request('POST', '/v1/payment_sessions/demo')).status);
    }
    expect(statuses[0]).toBe(201);
    expect(statuses).toContain(429);
    const res = await t.request('POST', '/v1/payment_sessions/demo');
    if (res.status === 429)
      expect(res.body).toMatchObject({ code: 4, message: expect.stringMatching(/too many demo sessions from this client/) });
  });
});
