/**
 * The SDK's x402 helpers as a merchant and an agent use them, imported from the package
 * (`@stablecoin-payments/sdk`): a node:http resource server guarded by requirePayment against a started
 * node, paid by payingFetch with a funded agent wallet (the ledger moves once), and a declined payment.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requirePayment, payingFetch, PaymentDeclinedError, decodeChallenge, decodeHeader, X402_HEADERS } from '@stablecoin-payments/sdk';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { POLICY, balanceOf, createWallet, fund, type WalletRef } from './agents-helpers.ts';

let t: TestNode;
let m: RegisteredMerchant;
let server: Server;
let base: string;
let agent: WalletRef;
const served: string[] = [];

beforeAll(async () => {
  // agent-wallet payments settle inside the ledger: no chain is needed (the RPC URL is never dialled)
  t = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:9',
    ETHEREUM_TESTNET_USDC_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  m = await registerMerchant(t);
  const pay = requirePayment({
    serviceUrl: t.url,
    apiKey: m.apiKey,
    amount_subunits: '750000',
    description: 'one forecast',
    paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
  });
  server = createServer((req, res) =>
    pay(req, res, () => {
      served.push(req.url!);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ forecast: 'sunny', url: req.url }));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = await createWallet(t, m, 'agent', 'ethereum', 'testnet');
  await fund(t, m, agent, 5_000_000n);
  await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY });
}, 180_000);

afterAll(async () => {
  server?.close();
  await t?.stop();
});

async function settlementWallet(): Promise<WalletRef> {
  const list = (await t.request('GET', '/v1/wallets?limit=100', { key: m.apiKey })).body.data as Array<WalletRef & { is_default: boolean }>;
  return list.find((w) => w.is_default && w.chain === 'ethereum')!;
}

it('without a proof the resource server answers 402 with the challenge in both headers', async () => {
  const r = await fetch(`${base}/weather?city=oslo`);
  expect(r.status).toBe(402);
  expect(r.headers.get(X402_HEADERS.required)).toBe(r.headers.get(X402_HEADERS.requiredLegacy));
  const challenge = decodeChallenge(r.headers.get(X402_HEADERS.required))!;
  const payee = await settlementWallet();
  expect(challenge).toMatchObject({
    scheme: 'exact',
    network: 'testnet',
    amount: '750000',
    payTo: payee.address,
    resource: '/weather?city=oslo',
    description: 'one forecast',
  });
  const body = (await r.json()) as { x402Version: number; accepts: unknown[]; chain: string };
  expect(body).toMatchObject({ x402Version: 1, chain: 'ethereum', accepts: [challenge] });
  expect(served).toEqual([]);
});

it('payingFetch pays the 402 from the agent wallet and gets the resource; the money moves once; the proof is not replayable', async () => {
  const payee = await settlementWallet();
  const before = await balanceOf(t, m, payee.id);
  const paying = payingFetch(m.apiKey, agent.id, { serviceUrl: t.url });
  const r = await paying(`${base}/weather?city=rome`);
  expect(r.status).toBe(200);
  expect(await r.json()).toEqual({ forecast: 'sunny', url: '/weather?city=rome' });
  const receipt = decodeHeader(r.headers.get(X402_HEADERS.response));
  expect(receipt).toMatchObject({ success: true });
  expect(served).toEqual(['/weather?city=rome']);
  expect(await balanceOf(t, m, agent.id)).toBe(5_000_000n - 750_000n);
  expect(await balanceOf(t, m, payee.id)).toBe(before + 750_000n);

  const attempts = (await t.request('GET', `/v1/agent-wallets/${agent.id}/spend-attempts`, { key: m.apiKey })).body.data;
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatchObject({
    status: 'pending',
    target: payee.address,
    amount_subunits: '750000',
    settlement: { status: 'settled' },
  });
  expect(receipt!.challenge_id).toBe(attempts[0].reference);
  const replay = await fetch(`${base}/weather?city=rome`, { headers: { 'X-Service-Payment': attempts[0].spend_reference } });
  expect(replay.status).toBe(402);
  expect(((await replay.json()) as { error: string }).error).toMatch(/^already_redeemed/);
  expect(served).toHaveLength(1);
  expect(await balanceOf(t, m, agent.id)).toBe(5_000_000n - 750_000n);
});

it('a policy that denies: payingFetch throws PaymentDeclinedError with the attempt, nothing is paid or served', async () => {
  await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, {
    key: m.apiKey,
    body: { ...POLICY, allowed_api_domains: ['elsewhere.example'] },
  });
  const paying = payingFetch(m.apiKey, agent.id, { serviceUrl: t.url });
  const err = await paying(`${base}/weather?city=lima`).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PaymentDeclinedError);
  expect((err as PaymentDeclinedError).attempt).toMatchObject({ status: 'denied', reason: 'api_domain_not_allowed' });
  expect(served).toHaveLength(1);
  expect(await balanceOf(t, m, agent.id)).toBe(5_000_000n - 750_000n);
});
