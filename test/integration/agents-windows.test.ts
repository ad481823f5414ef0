/**
 * Window caps across policy changes, through HTTP: a window made longer by a new policy counts every
 * pending and posted spend inside it, also the ones the wallet's actor had stopped tracking because the
 * previous policy's windows were shorter.
 */
import { Wallet } from 'ethers';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { RAIL, POLICY, attemptBody, createWallet, fund, type WalletRef } from './agents-helpers.ts';

let t: TestNode;
let m: RegisteredMerchant;
let agent: WalletRef;
let skewMs = 0;

beforeAll(async () => {
  t = await startTestNode(
    {
      ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:9',
      ETHEREUM_TESTNET_USDC_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      RATE_LIMIT_PER_MINUTE: '100000',
    },
    { now: () => new Date(Date.now() + skewMs) },
  );
  m = await registerMerchant(t);
  agent = await createWallet(t, m, 'agent');
  await fund(t, m, agent, 10_000_000n);
});
afterAll(async () => t?.stop());

const policy = (duration: string) => ({ ...POLICY, limits: { [RAIL]: { windows: [{ duration, max_subunits: '1000000' }] } } });
const put = (body: unknown) => t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body });
const attempt = (target: string, subunits: bigint) =>
  t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, { key: m.apiKey, body: attemptBody(target, subunits) });

it('a policy with a longer window counts the spends the shorter one had already let go', async () => {
  const own = await createWallet(t, m, 'merchant');
  const outside = Wallet.createRandom().address;
  expect((await put(policy('1h'))).status).toBe(200);
  expect((await attempt(own.address, 600_000n)).body).toMatchObject({ status: 'pending', settlement: { status: 'settled' } });
  // to an outside address (sandbox money: simulated, settled in the ledger)
  expect((await attempt(outside, 200_000n)).body).toMatchObject({ status: 'pending', settlement: { execution: 'simulated' } });
  skewMs = 2 * 3_600_000; // both spends are outside the 1h window now
  expect((await attempt(own.address, 100_000n)).body.status).toBe('pending');
  expect((await put(policy('24h'))).status).toBe(200);
  // 600k + 200k + 100k already spent in the last 24h: 200k more would pass 1M
  const r = await attempt(own.address, 200_000n);
  expect(r.body).toMatchObject({ status: 'denied', reason: 'window_amount_exceeded' });
  const ev = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/evaluate`, {
    key: m.apiKey,
    body: attemptBody(own.address, 100_000n),
  });
  expect(ev.body).toMatchObject({
    status: 'pending',
    windows: [{ duration: '24h', used_subunits: '900000', used_count: 3, remaining_subunits: '100000' }],
  });
});
