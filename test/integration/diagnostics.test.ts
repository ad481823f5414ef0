/**
 * GET /v1/payment_sessions/{id}/diagnostics produces each finding code from a real situation on local
 * chains (two Hardhat nodes: one configured as testnet, one as mainnet), paid with ethers, and a webhook
 * endpoint that fails; nothing in the answer is an RPC URL, a derivation index or a key fingerprint.
 */
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { RAILS, createSession, sessionWhen, until } from './chain-listener-helpers.ts';
import type { PaymentSessionState } from '../../lib/sessions/payment-session.ts';

jest.setTimeout(300_000);

describe('session diagnostics from real situations', () => {
  let testnet: HardhatNode;
  let mainnet: HardhatNode;
  let usdc: TestUsdc;
  let usdcMain: TestUsdc;
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);

  async function diagnostics(id: string, key = m.apiKey) {
    const res = await t.request('GET', `/v1/payment_sessions/${id}/diagnostics`, { key });
    expect(res.status).toBe(200);
    // merchant-safe: no RPC URL, derivation index or key fingerprint anywhere in the answer
    const stored = (await t.node.rt.store.get<PaymentSessionState>('payment_sessions', id))!;
    expect(res.text).not.toContain(testnet.url);
    expect(res.text).not.toContain(mainnet.url);
    expect(res.text).not.toContain(stored.key_fingerprint);
    expect(res.text).not.toMatch(/address_index|derivation|fingerprint|rpc/i);
    return res.body as {
      session_id: string;
      status: string;
      findings: Array<{ code: string; severity: string; explanation: string; next_step: string; details: Record<string, unknown> }>;
    };
  }
  const codes = async (id: string) => (await diagnostics(id)).findings.map((f) => f.code);
  const finding = async (id: string, code: string) => (await diagnostics(id)).findings.find((f) => f.code === code);

  beforeAll(async () => {
    [testnet, mainnet] = await Promise.all([startHardhatNode(), startHardhatNode()]);
    [usdc, usdcMain] = await Promise.all([testnet.deployTestUsdc(), mainnet.deployTestUsdc()]);
    for (const i of [1, 2]) await usdc.mint(testnet.accounts[i]!.address, 1_000_000_000n);
    await usdcMain.mint(mainnet.accounts[1]!.address, 1_000_000_000n);
    rx = await startReceiver(() => 500);
    t = await startTestNode(
      {
        ETHEREUM_TESTNET_RPC_URL: testnet.url,
        ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
        ETHEREUM_TESTNET_CONFIRMATIONS: '3',
        ETHEREUM_MAINNET_RPC_URL: mainnet.url,
        ETHEREUM_MAINNET_USDC_ADDRESS: usdcMain.address,
        ETHEREUM_MAINNET_CONFIRMATIONS: '2',
        CHAIN_POLL_INTERVAL_MS: '100',
        SESSION_SCAN_INTERVAL_MS: '100',
        WEBHOOK_SCAN_INTERVAL_MS: '100',
        WEBHOOK_RETRY_BASE_MS: '3600000',
      },
      { now },
    );
    m = await merchant(t, { webhook_url: rx.url });
    // the listeners hold their leases before anything is paid
    await until('the listeners to run', async () => (await t.node.rt.store.count('listener_leases', {})) === 2);
  });

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await Promise.all([testnet?.stop(), mainnet?.stop()]);
  });

  it('a fresh session has nothing to report', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    expect(await codes(s.session_id)).toEqual([]);
  });

  let partial: { session_id: string };
  it('confirmation_lag: paid on chain, below the depth, with the current depth', async () => {
    partial = await createSession(t, m, RAILS.ethUsdc, 10);
    const { hash } = await usdc.transfer(1, (partial as { address?: string } & typeof partial).address!, 5_000_000n);
    const f = await finding(partial.session_id, 'confirmation_lag');
    expect(f).toMatchObject({
      severity: 'info',
      details: { tx_hash: hash, confirmations: 1, required_confirmations: 3, amount: '5', token: 'USDC' },
    });
    await testnet.mine(1);
    expect((await finding(partial.session_id, 'confirmation_lag'))!.details.confirmations).toBe(2);
  });

  it('stuck_unconfirmed: the same payment, still below the depth 20 minutes later', async () => {
    offset += 20 * 60_000;
    const f = await finding(partial.session_id, 'stuck_unconfirmed');
    expect(f).toMatchObject({ severity: 'warning', details: { confirmations: 2, required_confirmations: 3 } });
    expect(f!.details.minutes_waiting).toBeGreaterThanOrEqual(19);
  });

  it('underpaid: credited at depth, some but not enough', async () => {
    await testnet.mine(1);
    await sessionWhen(t, m, partial.session_id, 'partial payment', (x) => x.status === 'partial_paid');
    const f = await finding(partial.session_id, 'underpaid');
    expect(f).toMatchObject({ severity: 'action', details: { expected: '10 USDC', received: '5 USDC', missing: '5 USDC' } });
    expect(await codes(partial.session_id)).not.toContain('confirmation_lag');
  });

  it('overpaid, and webhook_failing for its completed webhook', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    await usdc.transfer(2, s.address, 3_000_000n);
    await testnet.mine(2);
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(await finding(s.session_id, 'overpaid')).toMatchObject({ details: { excess: '2 USDC', received: '3 USDC' } });
    const failing = await until('the failed attempt', async () => (await finding(s.session_id, 'webhook_failing')) ?? null);
    expect(failing).toMatchObject({
      severity: 'action',
      details: { event_type: 'payment_session.completed', last_http_status: 500, failed_attempts: 1 },
    });
  });

  it('wrong_token: ETH sent to a USDC session', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    const { hash } = await testnet.sendEth(2, s.address, 10n ** 16n);
    await testnet.mine(2);
    const f = await until('the wrong-token finding', async () => (await finding(s.session_id, 'wrong_token')) ?? null);
    expect(f).toMatchObject({ details: { tx_hash: hash, token: 'ETH', expected_token: 'USDC' } });
  });

  it("wrong_network: the session's address paid on mainnet", async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    const { hash } = await usdcMain.transfer(1, s.address, 1_000_000n);
    await mainnet.mine(2);
    const f = await until('the wrong-network finding', async () => (await finding(s.session_id, 'wrong_network')) ?? null, 60_000);
    expect(f).toMatchObject({ details: { tx_hash: hash, network: 'mainnet', expected_network: 'testnet' } });
  });

  it('expired_unpaid and paid_after_expiry', async () => {
    const unpaid = await createSession(t, m, RAILS.ethUsdc, 1, '10s');
    const late = await createSession(t, m, RAILS.ethUsdc, 1, '10s');
    offset += 30_000;
    await sessionWhen(t, m, unpaid.session_id, 'expiry', (x) => x.status === 'expired');
    await sessionWhen(t, m, late.session_id, 'expiry', (x) => x.status === 'expired');
    expect(await finding(unpaid.session_id, 'expired_unpaid')).toMatchObject({ severity: 'info' });
    await usdc.transfer(1, late.address, 1_000_000n);
    await testnet.mine(2);
    await sessionWhen(t, m, late.session_id, 'the late credit', (x) => x.deposits.some((d: { late: boolean }) => d.late));
    const codesLate = await codes(late.session_id);
    expect(codesLate).toContain('paid_after_expiry');
    expect(codesLate).not.toContain('expired_unpaid');
  });

  it('/metrics reports the listener lag per chain and network and webhook attempts by result, never ids', async () => {
    const text = await until('the listener lag and webhook series', async () => {
      const body = await (await fetch(`${t.url}/metrics`)).text();
      return (
        /^chain_listener_lag_blocks\{chain="ethereum",network="testnet"\} \d+$/m.test(body) &&
        /^chain_listener_lag_seconds\{chain="ethereum",network="mainnet"\} [0-9.e+-]+$/m.test(body) &&
        /^webhook_delivery_attempts_total\{result="failed"\} [1-9]\d*$/m.test(body) &&
        body
      );
    });
    expect(text).not.toMatch(/(ps|mer|evt)_[0-9a-z]{20,}/);
  });

  it('listener_lag: nobody watches the chain once the listener stops', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    expect(await codes(s.session_id)).not.toContain('listener_lag');
    await t.node.broker.destroyService('ethereum-listener');
    const f = await finding(s.session_id, 'listener_lag');
    expect(f).toMatchObject({ severity: 'action', details: { listener_running: false } });
  });

  it("another merchant's session is unknown", async () => {
    const other = await merchant(t);
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}/diagnostics`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}/diagnostics`)).status).toBe(401);
  });
});
