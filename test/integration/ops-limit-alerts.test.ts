/**
 * limit_violation alerts from the other limit sites (payout caps, mainnet wallets while gated): each
 * refusal counts in abuse_signal_total and raises the merchant's alert; a request within the cap does not.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import { eventually } from '../helpers/wait.ts';
import type { AlertDoc } from '../../lib/ops/alerts/engine.ts';

const ETH = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
const DESTINATION = '0x52908400098527886E0F7030069857D2E4169EE7';

describe('limit_violation alerts from payouts and wallets', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      PAYOUT_AMOUNT_LIMIT: '5',
      ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9',
      SERVICES: 'api,discovery,merchants,merchant-actors,operators,sessions,session-actors,wallets,payouts,webhooks,ops',
    });
  });
  afterAll(async () => {
    await t?.stop();
  });
  const alertsOf = (merchantId: string) =>
    t.node.rt.store.find<AlertDoc>('alerts', { alert_type: 'limit_violation', merchant_id: merchantId });

  it('a payout above PAYOUT_AMOUNT_LIMIT alerts, one at the cap does not', async () => {
    const m = await merchant(t);
    const s = (
      await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 50, expires_in: '1h', paymentMethod: ETH } })
    ).body;
    expect((await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
    const [wallet] = (await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data;
    expect(
      (
        await t.request('POST', '/v1/payouts', {
          key: m.apiKey,
          body: { wallet_id: wallet.id, amount: 5, token: 'USDC', destination: DESTINATION },
        })
      ).status,
    ).toBe(201);
    expect(await alertsOf(m.id)).toHaveLength(0);
    const over = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: wallet.id, amount: 5.5, token: 'USDC', destination: DESTINATION },
    });
    expect(over.status).toBeGreaterThanOrEqual(400);
    const [alert] = await eventually('the payout cap alert', async () => {
      const a = await alertsOf(m.id);
      return a.length > 0 && a;
    });
    expect(alert.payload).toMatchObject({ merchant_id: m.id, chain: 'ethereum', network: 'testnet', environment: 'sandbox' });
    expect(alert.payload.last_error_code).toMatch(/limit_exceeded$/);
    // payouts by status on /metrics: the sandbox payout completed at once
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^payouts\{status="completed"\} 1$/m);
    expect(metrics).toMatch(/^payouts\{status="failed"\} 0$/m);
  });

  it('a sandbox merchant asking for a mainnet wallet alerts', async () => {
    const m = await merchant(t);
    expect((await t.request('POST', '/v1/wallets', { key: m.apiKey, body: { chain: 'ethereum', network: 'mainnet' } })).status).toBe(403);
    const [alert] = await eventually('the mainnet wallet alert', async () => {
      const a = await alertsOf(m.id);
      return a.length > 0 && a;
    });
    expect(alert.payload).toMatchObject({ last_error_code: 'mainnet_kyc_required', network: 'mainnet', route: 'POST /v1/wallets' });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(
      /abuse_signal_total\{signal="limit_violation",outcome="mainnet_kyc_required",environment="sandbox",chain="ethereum",network="mainnet",token=""\} 1/,
    );
  });
});
