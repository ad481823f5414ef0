/**
 * The environment gate on x402 challenges through HTTP (lib/core/environment.ts, the one gate sessions,
 * payouts and agent spends use too): a sandbox merchant charges on testnet only, a live merchant on
 * mainnet only (a testnet challenge would be paid in free tokens) and only after KYC. Refusals are 403
 * on paymentMethod.network and count a mainnet attempt as an abuse signal.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { abuseCount, liveMerchant, merchant } from './sessions-helpers.ts';

describe('x402 challenges: the environment gate', () => {
  let t: TestNode;
  let sandbox: RegisteredMerchant;
  let live: RegisteredMerchant;

  beforeAll(async () => {
    // a mainnet rail exists only with its RPC URL; nothing listens there in this test
    t = await startTestNode({ ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9' });
    sandbox = await merchant(t);
    live = await liveMerchant(t);
  });
  afterAll(() => t?.stop());

  const challenge = (key: string, network: 'testnet' | 'mainnet') =>
    t.request('POST', '/v1/x402/challenges', {
      key,
      body: { resource: '/report', amount_subunits: '1000000', paymentMethod: { chain: 'ethereum', network, token: 'USDC' } },
    });
  const gated = () => abuseCount(t, { signal: 'limit_violation', outcome: 'mainnet_kyc_required' });

  it('a live merchant cannot charge on testnet, KYC or not, and it is no abuse signal', async () => {
    const before = await gated();
    for (const kyc of ['none', 'verified']) {
      await t.call('operators.setKyc', { merchant_id: live.id, status: kyc });
      const r = await challenge(live.apiKey, 'testnet');
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({
        code: 7,
        field: 'paymentMethod.network',
        message: expect.stringMatching(/live merchants are paid on mainnet rails only/),
        remediation: expect.stringMatching(/mainnet/),
      });
    }
    expect(await gated()).toBe(before);
    await t.call('operators.setKyc', { merchant_id: live.id, status: 'none' });
  });

  it('a sandbox merchant cannot charge on mainnet; a live one only after KYC; mainnet refusals count', async () => {
    const before = await gated();
    const fromSandbox = await challenge(sandbox.apiKey, 'mainnet');
    expect(fromSandbox.status).toBe(403);
    expect(fromSandbox.body).toMatchObject({
      field: 'paymentMethod.network',
      message: expect.stringMatching(/sandbox merchants can use testnet rails only/),
    });
    const noKyc = await challenge(live.apiKey, 'mainnet');
    expect(noKyc.status).toBe(403);
    expect(noKyc.body.message).toMatch(/mainnet x402 challenges require KYC verification/);
    expect(await gated()).toBe(before + 2);

    await t.call('operators.setKyc', { merchant_id: live.id, status: 'verified' });
    const ok = await challenge(live.apiKey, 'mainnet');
    expect(ok.status).toBe(201);
    expect(ok.body.challenge).toMatchObject({ network: 'mainnet', amount: '1000000' });
    expect((await challenge(sandbox.apiKey, 'testnet')).status).toBe(201);
  });
});
