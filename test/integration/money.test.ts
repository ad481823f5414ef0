/**
 * Wallets, settlement and payouts through HTTP on a started node: sandbox settlement from simulate
 * (available at once), wallet shapes and paging, the KYC gate, every payout refusal, insufficient funds,
 * internal transfer to an agent wallet, simulated payouts, idempotency under 20 concurrent requests with
 * one key, concurrent different payouts that cannot overdraw, and the ledger check.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { ETH_USDC, abuseCount, liveMerchant, merchant } from './sessions-helpers.ts';

const CHECKSUMMED = '0x52908400098527886E0F7030069857D2E4169EE7';

describe('wallets, settlement and payouts over HTTP', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let other: RegisteredMerchant;

  beforeAll(async () => {
    t = await startTestNode({ ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9', PAYOUT_AMOUNT_LIMIT: '500', DAILY_PAYOUT_LIMIT: '900' });
    m = await merchant(t);
    other = await merchant(t);
  }, 60_000);
  afterAll(async () => {
    await t.stop();
  });

  /** A sandbox session of `amount` USDC completed by simulate: its money settles available at once. */
  async function paidSession(who: RegisteredMerchant, amount: number) {
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: who.apiKey,
      body: { amount, expires_in: '15m', paymentMethod: ETH_USDC },
    });
    expect(s.status).toBe(201);
    const sim = await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: who.apiKey });
    expect(sim.status).toBe(200);
    return s.body.session_id as string;
  }
  /** `count` sandbox sessions of `who`, opened at once, of 1, 2, … USDC: their ids */
  const openSessions = (who: RegisteredMerchant, count: number) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const s = await t.request('POST', '/v1/payment_sessions', {
          key: who.apiKey,
          body: { amount: i + 1, expires_in: '15m', paymentMethod: ETH_USDC },
        });
        return s.body.session_id as string;
      }),
    );
  const wallets = async (who: RegisteredMerchant) => (await t.request('GET', '/v1/wallets', { key: who.apiKey })).body.data as any[];
  const usdc = (w: any) => w.balances.find((b: any) => b.token === 'USDC');
  const payout = (body: Record<string, unknown>, key = m.apiKey, headers?: Record<string, string>) =>
    t.request('POST', '/v1/payouts', { key, body, headers });

  let wallet: any;

  it('a simulated sandbox payment settles into the default wallet, available at once, once', async () => {
    const sid = await paidSession(m, 1000);
    const list = await wallets(m);
    expect(list).toHaveLength(1);
    wallet = list[0];
    expect(wallet).toMatchObject({ merchant_id: m.id, type: 'merchant', chain: 'ethereum', network: 'testnet', is_default: true });
    expect(wallet.id).toMatch(/^wal_/);
    expect(wallet.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(wallet.balances.map((b: any) => b.token).sort()).toEqual(['ETH', 'USDC']);
    expect(usdc(wallet)).toMatchObject({ available: 1000, available_subunits: '1000000000', pending: 0, pending_subunits: '0' });
    const txs = await t.request('GET', `/v1/wallets/${wallet.id}/transactions`, { key: m.apiKey });
    expect(txs.status).toBe(200);
    expect(txs.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(txs.body.data).toEqual([
      expect.objectContaining({
        wallet_id: wallet.id,
        type: 'settlement',
        amount: 1000,
        amount_subunits: '1000000000',
        token: 'USDC',
        status: 'posted',
        session_id: sid,
        simulated: true,
      }),
    ]);
    // simulating again is refused by the session: nothing settles twice
    expect((await t.request('POST', `/v1/payment_sessions/${sid}/simulate`, { key: m.apiKey })).status).toBe(409);
    expect(usdc((await t.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body).available).toBe(1000);
  });

  it("creates wallets (sandbox: testnet only), pages them, hides other merchants' wallets", async () => {
    const agent = await t.request('POST', '/v1/wallets', {
      key: m.apiKey,
      body: { name: 'Agent', type: 'agent', chain: 'ethereum', network: 'testnet' },
    });
    expect(agent.status).toBe(201);
    expect(agent.headers.get('location')).toBe(`/v1/wallets/${agent.body.id}`);
    expect(agent.body).toMatchObject({ type: 'agent', name: 'Agent', is_default: false });
    expect(agent.body.address).not.toBe(wallet.address);
    const sol = await t.request('POST', '/v1/wallets', { key: m.apiKey, body: { chain: 'solana', network: 'testnet' } });
    expect(sol.status).toBe(201);
    expect(sol.body).toMatchObject({ type: 'merchant', name: null });
    expect(sol.body.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const p1 = await t.request('GET', '/v1/wallets?limit=2', { key: m.apiKey });
    expect(p1.body.data.map((w: any) => w.id)).toEqual([sol.body.id, agent.body.id]);
    expect(p1.body.has_more).toBe(true);
    const p2 = await t.request('GET', `/v1/wallets?limit=2&cursor=${p1.body.next_cursor}`, { key: m.apiKey });
    expect(p2.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(p2.body.data.map((w: any) => w.id)).toEqual([wallet.id]);
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=nope', 'other=1']) {
      expect((await t.request('GET', `/v1/wallets?${q}`, { key: m.apiKey })).status).toBe(400);
    }
    expect((await t.request('GET', `/v1/wallets/${wallet.id}`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/v1/wallets/${wallet.id}/transactions`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/v1/wallets/${wallet.id}`)).status).toBe(401);
    for (const body of [
      { chain: 'bitcoin', network: 'testnet' },
      { chain: 'ethereum' },
      { chain: 'ethereum', network: 'testnet', color: 'red' },
      { chain: 'ethereum', network: 'testnet', type: 'vault' },
    ]) {
      expect((await t.request('POST', '/v1/wallets', { key: m.apiKey, body })).status).toBe(400);
    }
  });

  it('mainnet wallets and payouts need a live merchant with KYC (mainnet_kyc_required)', async () => {
    const before = await abuseCount(t, { outcome: 'mainnet_kyc_required' });
    const sandboxTry = await t.request('POST', '/v1/wallets', { key: m.apiKey, body: { chain: 'ethereum', network: 'mainnet' } });
    expect(sandboxTry.status).toBe(403);
    expect(sandboxTry.body.message).toMatch(/testnet/);
    const live = await liveMerchant(t);
    const noKyc = await t.request('POST', '/v1/wallets', { key: live.apiKey, body: { chain: 'ethereum', network: 'mainnet' } });
    expect(noKyc.status).toBe(403);
    expect(noKyc.body).toMatchObject({ code: 7, message: expect.stringMatching(/KYC/) });
    expect(await abuseCount(t, { outcome: 'mainnet_kyc_required' })).toBe(before + 2);
    // live merchants are paid on mainnet only (testnet tokens have no value): not an abuse signal
    const liveTestnet = await t.request('POST', '/v1/wallets', { key: live.apiKey, body: { chain: 'ethereum', network: 'testnet' } });
    expect(liveTestnet.status).toBe(403);
    expect(liveTestnet.body.message).toMatch(/mainnet rails only/);
    expect(await abuseCount(t, { outcome: 'mainnet_kyc_required' })).toBe(before + 2);
    await t.call('operators.setKyc', { merchant_id: live.id, status: 'verified' });
    const ok = await t.request('POST', '/v1/wallets', { key: live.apiKey, body: { chain: 'ethereum', network: 'mainnet' } });
    expect(ok.status).toBe(201);
    await t.call('operators.setKyc', { merchant_id: live.id, status: 'rejected' });
    const po = await payout({ wallet_id: ok.body.id, amount: 1, token: 'USDC', destination: CHECKSUMMED }, live.apiKey);
    expect(po.status).toBe(403);
    expect(await abuseCount(t, { outcome: 'mainnet_kyc_required' })).toBe(before + 3);
  });

  it('refuses bad payouts with a 4xx that says what to change, changing nothing', async () => {
    const base = { wallet_id: wallet.id, amount: 1, token: 'USDC', destination: CHECKSUMMED };
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ token: 'SOL' }, 400, /not available on ethereum testnet/],
      [{ destination: '0x52908400098527886E0F7030069857D2E4169Ee7' }, 400, /EIP-55/],
      [{ destination: '0x1234' }, 400, /40 hex digits/],
      [{ destination: '0x0000000000000000000000000000000000000000' }, 400, /zero address/],
      [{ amount: 0.001 }, 400, /below the minimum/],
      [{ amount: 1.0000001 }, 400, /decimal places/],
      [{ amount: undefined, amount_subunits: '10000' }, 201, /./],
      [{ amount_subunits: '1000000' }, 400, /exactly one of amount/],
      [{ amount: undefined }, 400, /exactly one of amount/],
      [{ amount: 600 }, 400, /per-payout limit/],
      [{ amount: 999 }, 400, /per-payout limit/],
      [{ wallet_id: 'wal_nope' }, 404, /wallet not found/],
      [{ extra: 1 }, 400, /unknown field/],
    ];
    const limitsBefore = await abuseCount(t, { outcome: 'amount_limit_exceeded' });
    for (const [over, status, msg] of cases) {
      const body: Record<string, unknown> = { ...base, ...over };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      const res = await payout(body);
      expect([JSON.stringify(over), res.status]).toEqual([JSON.stringify(over), status]);
      if (status !== 201) expect(res.body.message).toMatch(msg);
    }
    expect(await abuseCount(t, { outcome: 'amount_limit_exceeded' })).toBe(limitsBefore + 2);
    const sol = (await wallets(m)).find((w) => w.chain === 'solana');
    expect((await payout({ wallet_id: sol.id, amount: 1, token: 'USDC', destination: CHECKSUMMED })).body.message).toMatch(
      /Solana address/,
    );
    // another merchant cannot pay out of this wallet
    expect((await payout(base, other.apiKey)).status).toBe(404);
  });

  it('pays a simulated sandbox payout at once; more than available is 409 insufficient available balance', async () => {
    const res = await payout({ wallet_id: wallet.id, amount: 100, token: 'USDC', destination: CHECKSUMMED, metadata: { ref: 'inv-1' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/payouts/${res.body.id}`);
    expect(res.body).toMatchObject({
      merchant_id: m.id,
      wallet_id: wallet.id,
      chain: 'ethereum',
      network: 'testnet',
      token: 'USDC',
      amount: 100,
      amount_subunits: '100000000',
      destination: CHECKSUMMED,
      status: 'completed',
      execution: 'simulated',
      simulated: true,
      tx_hash: null,
      fee_subunits: '0',
      failure_reason: null,
      metadata: { ref: 'inv-1' },
    });
    expect(res.body.completed_at).toEqual(expect.any(String));
    expect((await t.request('GET', `/v1/payouts/${res.body.id}`, { key: m.apiKey })).body).toEqual(res.body);
    expect((await t.request('GET', `/v1/payouts/${res.body.id}`, { key: other.apiKey })).status).toBe(404);
    const w = (await t.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body;
    expect(usdc(w).available_subunits).toBe(String(1000_000000 - 100_000000 - 10000));
    expect((await payout({ wallet_id: wallet.id, amount: 400, token: 'USDC', destination: CHECKSUMMED })).status).toBe(201);
    // 499.99 left
    const tooMuch = await payout({ wallet_id: wallet.id, amount: 500, token: 'USDC', destination: CHECKSUMMED });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body).toMatchObject({ code: 5, message: expect.stringMatching(/^insufficient available balance/) });
    const eth = await payout({ wallet_id: wallet.id, amount: 0.001, token: 'ETH', destination: CHECKSUMMED });
    expect(eth.status).toBe(409);
  });

  it('funds an agent wallet inside the ledger at once (transfer_out / transfer_in)', async () => {
    const agent = (await wallets(m)).find((w) => w.type === 'agent');
    const res = await payout({ wallet_id: wallet.id, amount: 50, token: 'USDC', destination: agent.address.toLowerCase() });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'completed',
      execution: 'ledger',
      destination: agent.address,
      destination_wallet_id: agent.id,
      tx_hash: null,
    });
    const a = (await t.request('GET', `/v1/wallets/${agent.id}`, { key: m.apiKey })).body;
    expect(usdc(a)).toMatchObject({ available: 50, pending: 0 });
    const outTx = (await t.request('GET', `/v1/wallets/${wallet.id}/transactions?limit=1`, { key: m.apiKey })).body;
    expect(outTx.data[0]).toMatchObject({ type: 'transfer_out', payout_id: res.body.id, amount: 50, status: 'posted' });
    expect(outTx.has_more).toBe(true);
    const inTx = (await t.request('GET', `/v1/wallets/${agent.id}/transactions`, { key: m.apiKey })).body;
    expect(inTx.data).toEqual([
      expect.objectContaining({ type: 'transfer_in', payout_id: res.body.id, amount: 50, status: 'posted', simulated: true }),
    ]);
    // paging the source wallet's transactions: newest first, every one once
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (
        await t.request('GET', `/v1/wallets/${wallet.id}/transactions?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { key: m.apiKey })
      ).body;
      seen.push(...page.data.map((x: any) => x.type));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['transfer_out', 'payout', 'payout', 'payout', 'settlement']);
    // to its own address is refused
    expect((await payout({ wallet_id: wallet.id, amount: 1, token: 'USDC', destination: wallet.address })).status).toBe(400);
  });

  it('20 concurrent requests with one Idempotency-Key create one payout and one transfer', async () => {
    const body = { wallet_id: wallet.id, amount: 7, token: 'USDC', destination: CHECKSUMMED };
    const before = usdc((await t.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body).available_subunits;
    const results = await Promise.all(Array.from({ length: 20 }, () => payout(body, m.apiKey, { 'Idempotency-Key': 'payout-key-1' })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const after = usdc((await t.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body).available_subunits;
    expect(BigInt(before) - BigInt(after)).toBe(7_000000n);
    const list = (await t.request('GET', `/v1/payouts?wallet_id=${wallet.id}&limit=100`, { key: m.apiKey })).body.data;
    expect(list.filter((p: any) => p.amount === 7)).toHaveLength(1);
    const transfers = await t.node.rt.store.find('ledger_transfers', { payout_id: results[0].body.id });
    expect(transfers).toHaveLength(1);
    const other = await payout({ ...body, amount: 8 }, m.apiKey, { 'Idempotency-Key': 'payout-key-1' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 5, message: 'idempotency key was already used with a different payload' });
  });

  it('concurrent different payouts never overdraw a wallet; the daily limit holds', async () => {
    const n = await merchant(t);
    await paidSession(n, 100);
    const w = (await wallets(n))[0];
    const results = await Promise.all(
      Array.from({ length: 20 }, () => payout({ wallet_id: w.id, amount: 15, token: 'USDC', destination: CHECKSUMMED }, n.apiKey)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(6);
    expect(
      results.filter((r) => r.status !== 201).every((r) => r.status === 409 && /insufficient available balance/.test(r.body.message)),
    ).toBe(true);
    expect(usdc((await t.request('GET', `/v1/wallets/${w.id}`, { key: n.apiKey })).body).available_subunits).toBe('10000000');
    // DAILY_PAYOUT_LIMIT is 900 USDC: m already paid out 0.01 + 100 + 400 + 50 + 7 today
    await paidSession(m, 1000);
    const before = await abuseCount(t, { outcome: 'daily_volume_limit_exceeded' });
    expect((await payout({ wallet_id: wallet.id, amount: 300, token: 'USDC', destination: CHECKSUMMED })).status).toBe(201);
    const over = await payout({ wallet_id: wallet.id, amount: 100, token: 'USDC', destination: CHECKSUMMED });
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/daily payout limit of 900 USDC/);
    expect(await abuseCount(t, { outcome: 'daily_volume_limit_exceeded' })).toBe(before + 1);
  });

  it('30 sessions of one merchant simulated at once all settle into its one wallet, none lost', async () => {
    const n = await merchant(t);
    const ids = await openSessions(n, 30);
    const sims = await Promise.all(ids.map((id) => t.request('POST', `/v1/payment_sessions/${id}/simulate`, { key: n.apiKey })));
    expect(sims.map((r) => r.status)).toEqual(Array(30).fill(200));
    const list = await wallets(n);
    expect(list).toHaveLength(1);
    expect(usdc(list[0]).available).toBe((30 * 31) / 2);
    const txs = (await t.request('GET', `/v1/wallets/${list[0].id}/transactions?limit=100`, { key: n.apiKey })).body.data;
    expect(txs).toHaveLength(30);
  });

  it('100 settlements to one merchant at once never conflict: all 200, none a retryable 409, the balance is their sum', async () => {
    const n = await merchant(t);
    const ids = await openSessions(n, 100);
    // the first settlement creates the default wallet; the rest all credit that one wallet at once
    expect((await t.request('POST', `/v1/payment_sessions/${ids[0]}/simulate`, { key: n.apiKey })).status).toBe(200);
    const sims = await Promise.all(ids.slice(1).map((id) => t.request('POST', `/v1/payment_sessions/${id}/simulate`, { key: n.apiKey })));
    expect(sims.filter((r) => r.status !== 200).map((r) => [r.status, r.body])).toEqual([]);
    const list = await wallets(n);
    expect(list).toHaveLength(1);
    expect(usdc(list[0])).toMatchObject({ available: (100 * 101) / 2, available_subunits: `${((100 * 101) / 2) * 1_000_000}` });
    const txs = (await t.request('GET', `/v1/wallets/${list[0].id}/transactions?limit=100`, { key: n.apiKey })).body.data;
    expect(txs).toHaveLength(100);
  });

  it('lists payouts newest first with paging; the ledger check passes', async () => {
    const p1 = (await t.request('GET', '/v1/payouts?limit=2', { key: m.apiKey })).body;
    expect(p1.data).toHaveLength(2);
    expect(p1.has_more).toBe(true);
    const p2 = (await t.request('GET', `/v1/payouts?limit=100&cursor=${p1.next_cursor}`, { key: m.apiKey })).body;
    const ids = [...p1.data, ...p2.data].map((p: any) => p.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect((await t.request('GET', '/v1/payouts?limit=0', { key: m.apiKey })).status).toBe(400);
    const report = await t.call('wallets.ledgerCheck');
    expect(report).toMatchObject({ ok: true, problems: [] });
    expect(report.counts.transfers).toBeGreaterThan(5);
  });
});
