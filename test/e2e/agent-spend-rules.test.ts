/**
 * Issue 18, leak 5 (the items outside x402), over HTTP against a started node on a real Hardhat node:
 * - `evaluate` on another merchant's agent wallet is a 404 before anything is computed (it used to answer
 *   that wallet's 24 h window: 2,000,000 of 100,000,000 used, 2 spends);
 * - a plain payout from an agent wallet cannot go around its spend policy: refused (403), except one
 *   returning the money to one of the merchant's own merchant wallets;
 * - an agent spend executed on chain is a payout: PAYOUT_AMOUNT_LIMIT and DAILY_PAYOUT_LIMIT bind it,
 *   counted with the merchant's other payouts of the day (they used to be skipped);
 * - a payout that waits says why: `waiting_reason` in the API.
 */
import { Wallet } from 'ethers';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { TestNode } from '../helpers/node.ts';
import { startEthereumMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { POLICY, attemptBody, createWallet, type WalletRef } from '../integration/agents-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(300_000);

describe('agent wallets spend only through their policy and the platform limits', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let t: TestNode;
  let m: RegisteredMerchant;
  let other: RegisteredMerchant;
  let main: any;
  let agent: WalletRef;
  let gasWallet: string;

  beforeAll(async () => {
    ({ eth, usdc, t, gasWallet } = await startEthereumMoneyNode({
      PAYOUT_AMOUNT_LIMIT: '3',
      DAILY_PAYOUT_LIMIT: '10',
      RATE_LIMIT_PER_MINUTE: '100000',
    }));
    m = await merchant(t);
    other = await merchant(t);
    const su = await createSession(t, m, RAILS.ethUsdc, 20);
    await usdc.transfer(1, su.address, 20_000_000n);
    await sessionWhen(t, m, su.session_id, 'completion', (x) => x.status === 'completed');
    const se = await createSession(t, m, RAILS.eth, 0.05);
    await eth.sendEth(2, se.address, 5n * 10n ** 16n);
    main = await until(
      'the USDC and ETH to become available',
      async () => {
        const { data } = await get('/v1/wallets?limit=100');
        const w = data.find((x: any) => x.chain === 'ethereum' && x.is_default);
        return w && bal(w, 'USDC')?.available_subunits === '20000000' && BigInt(bal(w, 'ETH')?.available_subunits ?? '0') > 0n ? w : null;
      },
      90_000,
    );
    agent = await createWallet(t, m, 'agent');
    expect((await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY })).status).toBe(200);
    // the agent's money: 6 USDC (3 + 3, each within PAYOUT_AMOUNT_LIMIT; 6 of today's 10) and ETH for its gas
    for (const body of [
      { amount_subunits: '3000000', token: 'USDC' },
      { amount_subunits: '3000000', token: 'USDC' },
      { amount_subunits: '10000000000000000', token: 'ETH' },
    ])
      await pay(m, { wallet_id: main.id, destination: agent.address, ...body });
    await settled();
  }, 240_000);

  afterAll(async () => {
    await t?.stop();
    await eth?.stop();
  });

  const get = async (path: string) => {
    const r = await t.request('GET', path, { key: m.apiKey });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const bal = (w: any, token: string) => w.balances.find((b: any) => b.token === token);
  const pay = async (who: RegisteredMerchant, body: Record<string, unknown>) => {
    const r = await t.request('POST', '/v1/payouts', { key: who.apiKey, body });
    if (r.status !== 201) throw new Error(`payout refused: ${r.status} ${r.text}`);
    return r.body;
  };
  const settled = () =>
    until(
      'custody moves and payouts to settle',
      async () => {
        const s = await t.call('money-out.status');
        const { data } = await get('/v1/payouts?limit=100');
        const busy = s.custody_moves.waiting + s.custody_moves.topup + s.custody_moves.moving;
        return busy === 0 && data.every((p: any) => p.status === 'completed' || p.status === 'failed') ? true : null;
      },
      120_000,
    );
  const spend = (subunits: bigint, target = Wallet.createRandom().address) =>
    t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, { key: m.apiKey, body: attemptBody(target, subunits) });

  it("evaluate on another merchant's agent wallet is a 404 that reveals nothing", async () => {
    expect((await spend(1_000_000n)).body.status).toBe('pending'); // usage the other merchant must not see
    const body = attemptBody(Wallet.createRandom().address, 1_000_000n);
    const theirs = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/evaluate`, { key: other.apiKey, body });
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toMatch(/window|used_subunits|remaining/);
    const unknown = await t.request('POST', `/v1/agent-wallets/wal_doesnotexist/spend-attempts/evaluate`, { key: other.apiKey, body });
    expect([unknown.status, unknown.body.code]).toEqual([404, theirs.body.code]);
    const mine = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/evaluate`, { key: m.apiKey, body });
    expect(mine.status).toBe(200);
    expect(mine.body.windows[0]).toMatchObject({ used_subunits: '1000000', used_count: 1 });
    await settled();
  });

  it('a plain payout from an agent wallet is refused, except back to one of the merchant’s merchant wallets', async () => {
    const before = bal(await get(`/v1/wallets/${agent.id}`), 'USDC').available_subunits;
    const out = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: agent.id, amount_subunits: '500000', token: 'USDC', destination: Wallet.createRandom().address },
    });
    expect(out.status).toBe(403);
    expect(out.body.message).toMatch(/agent wallet go through its spend policy/);
    expect(out.body.remediation).toContain(`/v1/agent-wallets/${agent.id}/spend-attempts`);
    const sibling = await createWallet(t, m, 'agent');
    const toAgent = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: agent.id, amount_subunits: '500000', token: 'USDC', destination: sibling.address },
    });
    expect(toAgent.status).toBe(403);
    expect(bal(await get(`/v1/wallets/${agent.id}`), 'USDC').available_subunits).toBe(before);
    const back = await pay(m, { wallet_id: agent.id, amount_subunits: '500000', token: 'USDC', destination: main.address });
    expect(back).toMatchObject({ status: 'completed', execution: 'ledger' });
    await settled();
  });

  it('a waiting payout says why (waiting_reason), and says nothing once it moved on', async () => {
    const second = await createWallet(t, m, 'merchant');
    await eth.setBalance(gasWallet, 0n); // the custody moves into `second` wait for gas
    await pay(m, { wallet_id: main.id, amount_subunits: '5000000000000000', token: 'ETH', destination: second.address });
    await pay(m, { wallet_id: main.id, amount_subunits: '300000', token: 'USDC', destination: second.address });
    const p = await pay(m, { wallet_id: second.id, amount_subunits: '100000', token: 'USDC', destination: Wallet.createRandom().address });
    expect(p.waiting_reason).toBeNull();
    const waiting = await until(
      'the payout to wait for its money',
      async () => {
        const x = await get(`/v1/payouts/${p.id}`);
        return x.waiting_reason ? x : null;
      },
      60_000,
    );
    expect(waiting).toMatchObject({ status: 'pending', waiting_reason: 'custody_move_pending' });
    await eth.setBalance(gasWallet, 10n ** 19n);
    await settled();
    expect(await get(`/v1/payouts/${p.id}`)).toMatchObject({ status: 'completed', waiting_reason: null });
  });
  it('an agent spend on chain honours PAYOUT_AMOUNT_LIMIT and DAILY_PAYOUT_LIMIT', async () => {
    // today so far: 3 + 3 (funding) + 1 (first spend) + 0.5 (back to main) + 0.4 (previous test) = 7.9 of 10 USDC
    const big = await spend(3_500_000n);
    expect(big.body).toMatchObject({ status: 'approval_required' });
    const approved = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${big.body.id}/approve`, { key: m.apiKey });
    expect(approved.body).toMatchObject({ status: 'denied', reason: 'payout_amount_limit_exceeded' });
    const target = Wallet.createRandom().address;
    const ok = await spend(2_000_000n, target); // 9.9 of 10
    expect(ok.body).toMatchObject({ status: 'pending', settlement: { execution: 'chain' } });
    const over = await spend(200_000n); // would be 10.1
    expect(over.body).toMatchObject({ status: 'denied', reason: 'daily_payout_limit_exceeded' });
    expect(over.body.ledger_entry_id).toBeUndefined();
    await settled();
    expect(await usdc.balanceOf(target)).toBe(2_000_000n);
    // plain payouts and agent spends count in the same day: 0.1 left
    const left = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: main.id, amount_subunits: '200000', token: 'USDC', destination: Wallet.createRandom().address },
    });
    expect(left.status).toBe(400);
    expect(left.body.message).toMatch(/daily payout limit of 10 USDC .* 0\.1 USDC left today/);
  });
});
