/**
 * Agent wallets through HTTP: spend policies (versioned), every rule and its reason in order, 50
 * concurrent attempts against a window cap, reference idempotency, approval and denial, execution to an
 * own wallet inside the ledger, denied attempts with no ledger row, the limit_violation signal.
 */
import { Wallet } from 'ethers';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { RAIL, POLICY, attemptBody, balanceOf, createWallet, fund, type WalletRef } from './agents-helpers.ts';

let t: TestNode;
let m: RegisteredMerchant;
let agent: WalletRef;
const outside = () => Wallet.createRandom().address;

beforeAll(async () => {
  t = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:9',
    ETHEREUM_TESTNET_USDC_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  m = await registerMerchant(t);
  agent = await createWallet(t, m, 'agent');
  await fund(t, m, agent, 100_000_000n);
});
afterAll(async () => t?.stop());

const put = (w: WalletRef, body: unknown, key = m.apiKey) => t.request('PUT', `/v1/agent-wallets/${w.id}/policy`, { key, body });
const attempt = (w: WalletRef, body: unknown, key = m.apiKey) =>
  t.request('POST', `/v1/agent-wallets/${w.id}/spend-attempts`, { key, body });
const txCount = async (w: WalletRef) =>
  (await t.request('GET', `/v1/wallets/${w.id}/transactions?limit=100`, { key: m.apiKey })).body.data.length as number;
const attemptCount = async (w: WalletRef) =>
  (await t.request('GET', `/v1/agent-wallets/${w.id}/spend-attempts?limit=100`, { key: m.apiKey })).body.data.length as number;

describe('spend policies', () => {
  it('without a policy every attempt is denied (no_policy), with no ledger row', async () => {
    const fresh = await createWallet(t, m, 'agent');
    await fund(t, m, fresh, 10_000_000n);
    const r = await attempt(fresh, attemptBody(outside(), 1_000_000n));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      status: 'denied',
      reason: 'no_policy',
      agent_wallet_id: fresh.id,
      merchant_id: m.id,
      amount: 1,
      amount_subunits: '1000000',
    });
    expect(r.body.ledger_entry_id).toBeUndefined();
    expect(await balanceOf(t, m, fresh.id)).toBe(10_000_000n);
    expect(await txCount(fresh)).toBe(1); // the funding transfer only
    expect((await t.request('GET', `/v1/agent-wallets/${fresh.id}/policy`, { key: m.apiKey })).status).toBe(404);
  });

  it('PUT returns a new pol_ id and version each time; GET reads the current one; unknown fields refused', async () => {
    const a = await put(agent, { ...POLICY, limits: { [RAIL]: { per_attempt_subunits: '1' } } });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ id: expect.stringMatching(/^pol_/), version: 1, agent_wallet_id: agent.id });
    const b = await put(agent, POLICY);
    expect(b.body.version).toBe(2);
    expect(b.body.id).not.toBe(a.body.id);
    const got = await t.request('GET', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey });
    expect(got.body).toEqual(b.body);
    for (const bad of [
      { ...POLICY, extra: 1 },
      { limits: { bogus: {} } },
      { limits: { [RAIL]: { windows: [{ duration: '5y', max_count: 1 }] } } },
      {},
    ]) {
      const r = await put(agent, bad);
      expect([r.status, r.body.code]).toEqual([400, 3]);
    }
    expect((await t.request('GET', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey })).body.version).toBe(2);
  });

  it("another merchant's wallet is a 404 for policies; a merchant wallet takes no policy", async () => {
    const other = await registerMerchant(t);
    expect((await put(agent, POLICY, other.apiKey)).status).toBe(404);
    const mw = await createWallet(t, m, 'merchant');
    expect((await put(mw, POLICY)).status).toBe(400);
  });
});

describe('spend attempts: each rule and its reason', () => {
  let target: string;
  beforeAll(async () => {
    await put(agent, POLICY);
    target = outside();
  });

  it('refuses bad bodies with 400 and changes nothing', async () => {
    for (const body of [
      { ...attemptBody(target, 1_000_000n), extra: true },
      { ...attemptBody(target, 1_000_000n), amount: 2 },
      attemptBody('not-an-address', 1_000_000n),
      { ...attemptBody(target, 1_000_000n), token_symbol: 'DOGE' },
    ]) {
      const r = await attempt(agent, body);
      expect([r.status, r.body.code]).toEqual([400, 3]);
    }
  });

  it('denies in rule order with stable reasons', async () => {
    const other = await registerMerchant(t);
    const mw = await createWallet(t, m, 'merchant');
    const cases: Array<[string, () => Promise<any>]> = [
      ['wallet_not_owned', () => attempt(agent, attemptBody(target, 1_000_000n), other.apiKey)],
      ['not_agent_wallet', () => attempt(mw, attemptBody(target, 1_000_000n))],
      ['sandbox_mainnet_not_allowed', () => attempt(agent, attemptBody(target, 1_000_000n, { network: 'mainnet' }))],
      [
        'wallet_rail_mismatch',
        () =>
          attempt(agent, { ...attemptBody(target, 1_000_000n), chain: 'solana', target: 'So11111111111111111111111111111111111111112' }),
      ],
      ['rail_not_in_policy', () => attempt(agent, { ...attemptBody(target, 1n), token_symbol: 'ETH', amount: 1e-18 })],
      ['per_attempt_cap_exceeded', () => attempt(agent, attemptBody(target, 5_000_001n))],
      ['approval_threshold', () => attempt(agent, attemptBody(target, 3_000_001n))],
    ];
    for (const [reason, run] of cases) {
      const r = await run();
      expect([reason, r.status, r.body.reason]).toEqual([reason, 201, reason]);
      expect(r.body.status).toBe(reason === 'approval_threshold' ? 'approval_required' : 'denied');
      expect(r.body.ledger_entry_id).toBeUndefined();
      expect(r.body.policy_id === undefined || r.body.policy_id.startsWith('pol_')).toBe(true);
    }
  });

  it('denylist, allowlists of targets and API domains, policy expiry', async () => {
    const deny = await createWallet(t, m, 'agent');
    const denied = outside();
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
      [{ denied_targets: [denied] }, { target: denied }, 'target_denied'],
      [{ allowed_targets: [outside()] }, {}, 'target_not_allowed'],
      [{ allowed_api_domains: ['api.example.com'] }, { api_domain: 'evil.example' }, 'api_domain_not_allowed'],
      [{ expires_at: '2020-01-01T00:00:00Z' }, {}, 'policy_expired'],
    ];
    for (const [policy, extra, reason] of cases) {
      await put(deny, { ...POLICY, ...policy });
      const r = await attempt(deny, { ...attemptBody(outside(), 1_000_000n), ...extra });
      expect([reason, r.body.status, r.body.reason]).toEqual([reason, 'denied', reason]);
    }
  });

  it('a live merchant on mainnet: rail_not_enabled, policy_mainnet_not_allowed, kyc_required once KYC is withdrawn', async () => {
    const t2 = await startTestNode({ ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9', ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:9' });
    try {
      const user = await t2.call('operators.createUser', { email: `live${Date.now()}@trusted.test` });
      const live = await registerMerchant(t2, { bearer: user.bearer_token });
      await t2.call('operators.setKyc', { merchant_id: live.id, status: 'verified' });
      const w = (
        await t2.request('POST', '/v1/wallets', { key: live.apiKey, body: { type: 'agent', chain: 'ethereum', network: 'mainnet' } })
      ).body;
      const go = (body: unknown) => t2.request('POST', `/v1/agent-wallets/${w.id}/spend-attempts`, { key: live.apiKey, body });
      const mainnetBody = attemptBody(outside(), 1_000_000n, { network: 'mainnet' });
      // no SOLANA_MAINNET_RPC_URL: that rail is not enabled
      expect((await go({ ...mainnetBody, chain: 'solana', target: 'So11111111111111111111111111111111111111112' })).body.reason).toBe(
        'rail_not_enabled',
      );
      await t2.request('PUT', `/v1/agent-wallets/${w.id}/policy`, {
        key: live.apiKey,
        body: { ...POLICY, limits: { 'ethereum:mainnet:USDC': {} } },
      });
      expect((await go(mainnetBody)).body).toMatchObject({ status: 'denied', reason: 'policy_mainnet_not_allowed' });
      await t2.call('operators.setKyc', { merchant_id: live.id, status: 'pending' });
      expect((await go(mainnetBody)).body).toMatchObject({ status: 'denied', reason: 'kyc_required' });
      const metrics = await (await fetch(`${t2.url}/metrics`)).text();
      expect(metrics).toMatch(
        /abuse_signal_total\{signal="limit_violation",outcome="mainnet_kyc_required",environment="live",chain="ethereum",network="mainnet",token="USDC"\} 2/,
      );
    } finally {
      await t2.stop();
    }
  });

  it('evaluate answers the decision, the trace and the headroom, writing nothing', async () => {
    const before = await attemptCount(agent);
    const r = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/evaluate`, {
      key: m.apiKey,
      body: attemptBody(target, 2_000_000n),
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('pending');
    expect(r.body.trace.map((x: { rule: string }) => x.rule)).toEqual([
      'ownership',
      'wallet_type',
      'sandbox_mainnet',
      'kyc',
      'rail',
      'policy',
      'denylist',
      'allowlist',
      'per_attempt_cap',
      'window_caps',
      'approval',
    ]);
    expect(r.body.windows[0]).toMatchObject({ rail: RAIL, duration: '24h', max_subunits: '10000000', max_count: 50 });
    expect(await attemptCount(agent)).toBe(before);
  });
});

describe('window caps under concurrency', () => {
  it('50 concurrent attempts never reserve more than the window cap; breaches count limit_violation', async () => {
    const w = await createWallet(t, m, 'agent');
    await fund(t, m, w, 100_000_000n);
    await put(w, { ...POLICY, limits: { [RAIL]: { windows: [{ duration: '1h', max_subunits: '10000000' }] } } });
    const results = await Promise.all(Array.from({ length: 50 }, () => attempt(w, attemptBody(outside(), 700_000n))));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const pending = results.filter((r) => r.body.status === 'pending');
    expect(pending).toHaveLength(14); // 14 × 0.7 = 9.8 ≤ 10 < 10.5
    expect(results.filter((r) => r.body.reason === 'window_amount_exceeded')).toHaveLength(36);
    expect(await balanceOf(t, m, w.id)).toBe(100_000_000n - 14n * 700_000n);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(
      /abuse_signal_total\{signal="limit_violation",outcome="daily_volume_limit_exceeded",environment="sandbox",chain="ethereum",network="testnet",token="USDC"\} (\d+)/,
    );
  });
});

describe('reference, approval, denial, own-wallet execution', () => {
  it('the same reference returns the same attempt; another body with it is 409', async () => {
    const body = attemptBody(outside(), 100_000n, { reference: 'order-77' });
    const a = await attempt(agent, body);
    const b = await attempt(agent, body);
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(b.body.id).toBe(a.body.id);
    const c = await attempt(agent, { ...body, amount: 0.2, amount_subunits: '200000' });
    expect([c.status, c.body.code]).toEqual([409, 5]);
  });

  it("a reference is the owner's alone: another merchant can neither read the owner's attempt with it nor take it first", async () => {
    const other = await registerMerchant(t);
    const mw = await createWallet(t, m, 'merchant');
    const body = attemptBody(mw.address, 100_000n, { reference: 'shared-ref-1' });
    const first = await attempt(agent, body, other.apiKey);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'denied', reason: 'wallet_not_owned', merchant_id: other.id });
    const mine = await attempt(agent, body);
    expect(mine.status).toBe(201);
    expect(mine.body).toMatchObject({ status: 'pending', merchant_id: m.id, settlement: { status: 'settled' } });
    const again = await attempt(agent, body, other.apiKey);
    expect(again.body).toMatchObject({ status: 'denied', reason: 'wallet_not_owned', merchant_id: other.id });
    expect(again.body.id).not.toBe(mine.body.id);
    expect((await attempt(agent, body)).body.id).toBe(mine.body.id);
  });

  it('to an own wallet: pending with a ledger transfer, settled inside the ledger at once', async () => {
    const mw = await createWallet(t, m, 'merchant');
    const r = await attempt(agent, attemptBody(mw.address, 1_500_000n));
    expect(r.body).toMatchObject({ status: 'pending', ledger_entry_id: r.body.id, settlement: { status: 'settled', execution: 'ledger' } });
    expect(await balanceOf(t, m, mw.id)).toBe(1_500_000n);
    const got = await t.request('GET', `/v1/agent-wallets/${agent.id}/spend-attempts/${r.body.id}`, { key: m.apiKey });
    expect(got.body).toEqual(r.body);
  });

  it('approval re-evaluates and executes; deny leaves nothing reserved; neither twice', async () => {
    const mw = await createWallet(t, m, 'merchant');
    const a = await attempt(agent, attemptBody(mw.address, 4_000_000n));
    expect(a.body.status).toBe('approval_required');
    const before = await balanceOf(t, m, agent.id);
    const ok = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${a.body.id}/approve`, { key: m.apiKey });
    expect(ok.body).toMatchObject({ status: 'pending', settlement: { status: 'settled' } });
    expect(ok.body.reason).toBeUndefined();
    expect(await balanceOf(t, m, agent.id)).toBe(before - 4_000_000n);
    expect((await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${a.body.id}/approve`, { key: m.apiKey })).status).toBe(
      409,
    );
    const d = await attempt(agent, attemptBody(mw.address, 4_000_000n));
    const denied = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${d.body.id}/deny`, { key: m.apiKey });
    expect(denied.body).toMatchObject({ status: 'denied', reason: 'denied_by_merchant' });
    expect((await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${d.body.id}/approve`, { key: m.apiKey })).status).toBe(
      409,
    );
    const audit = await t.node.rt.store.find<{ id: string; type: string; spend_attempt_id?: string }>('audit_events', {
      merchant_id: m.id,
    });
    expect(audit.filter((x) => x.spend_attempt_id === a.body.id).map((x) => x.type)).toEqual(['agent_wallet.spend.approved']);
    expect(audit.filter((x) => x.spend_attempt_id === d.body.id).map((x) => x.type)).toEqual(['agent_wallet.spend.denied']);
    const list = await t.request('GET', `/v1/agent-wallets/${agent.id}/spend-attempts?status=denied&limit=2`, { key: m.apiKey });
    expect(list.body.data[0].id).toBe(d.body.id);
    expect(list.body.has_more).toBe(true);
  });

  it('an attempt the wallet cannot fund is denied insufficient_funds, with no ledger row', async () => {
    const poor = await createWallet(t, m, 'agent');
    await put(poor, POLICY);
    const r = await attempt(poor, attemptBody(outside(), 1_000_000n));
    expect(r.body).toMatchObject({ status: 'denied', reason: 'insufficient_funds' });
    expect(await txCount(poor)).toBe(0);
  });
});
