/**
 * x402 v2 interop with the ecosystem's own, unmodified packages (@x402/* 2.27.0):
 *  - @x402/fetch + @x402/evm pay a `requirePayment` endpoint on Hardhat, with an EIP-3009 token whose
 *    EIP-712 domain is USDC's ("USD Coin" / "2");
 *  - @x402/fetch + @x402/svm pay one on the LiteSVM harness;
 *  - @x402/express's paymentMiddleware with HTTPFacilitatorClient pointed at this service settles through it.
 * Each asserts the balances on chain and in the ledger, and that a replay of the same PAYMENT-SIGNATURE is
 * refused with nothing moving.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEther } from 'ethers';
import express from 'express';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Keypair } from '@solana/web3.js';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { toClientSvmSigner } from '@x402/svm';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness, type MintInfo } from '../harness/solana-rpc.ts';
import { requirePayment, decodeChallenge, decodeHeader } from '../../sdk/src/x402.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { balanceOf, type WalletRef } from './agents-helpers.ts';
import { CatalogClient } from './catalog-helpers.ts';
import { withBazaar } from '@x402/extensions/bazaar';

let chain: HardhatNode;
let usdc: TestUsdc;
let sol: SolanaRpcHarness;
let mint: MintInfo;
let t: TestNode;
let m: RegisteredMerchant;
let ethWallet: WalletRef;
let solWallet: WalletRef;
let server: Server;
let base: string;
let gasEth: string;

/** a fetch that remembers the proof headers it sent, so a test can replay them */
function recording(): { fetch: typeof fetch; sent: Array<Record<string, string>> } {
  const sent: Array<Record<string, string>> = [];
  return {
    sent,
    fetch: async (input, init) => {
      const req = new Request(input, init);
      const h: Record<string, string> = {};
      req.headers.forEach((v, k) => (h[k] = v));
      sent.push(h);
      return fetch(req);
    },
  };
}

async function events(type: string): Promise<Array<Record<string, unknown>>> {
  const r = await t.request('GET', `/v1/events?type=${type}&limit=100`, { key: m.apiKey });
  expect(r.status).toBe(200);
  return r.body.data;
}

beforeAll(async () => {
  chain = await startHardhatNode();
  usdc = await chain.deployTestUsdc(0, { name: 'USD Coin' });
  sol = await startSolanaRpc();
  mint = await sol.createMint();
  t = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: chain.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    SOLANA_TESTNET_RPC_URL: sol.url,
    SOLANA_TESTNET_USDC_MINT: mint.mint,
    RATE_LIMIT_PER_MINUTE: '100000',
    CHAIN_POLL_INTERVAL_MS: '60000',
  });
  m = await registerMerchant(t);
  const opts = { serviceUrl: t.url, apiKey: m.apiKey, description: 'one report' };
  const payEth = requirePayment({
    ...opts,
    amount_subunits: '1000000',
    paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
  });
  const paySol = requirePayment({
    ...opts,
    amount_subunits: '2000000',
    paymentMethod: { chain: 'solana', network: 'testnet', token: 'USDC' },
  });
  server = createServer((req, res) =>
    (req.url?.startsWith('/sol') ? paySol : payEth)(req, res, () => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`paid content of ${req.url}`);
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the challenges pay into the merchant's settlement wallets, created on first need
  const first = await fetch(`${base}/warmup`);
  gasEth = ((await first.json()) as { fee_payer: string }).fee_payer;
  await (await chain.wallet(0).sendTransaction({ to: gasEth, value: parseEther('10') })).wait();
  const solFirst = await fetch(`${base}/sol/warmup`);
  await sol.airdrop(((await solFirst.json()) as { fee_payer: string }).fee_payer, 1_000_000_000n);
  const list = (await t.request('GET', '/v1/wallets?limit=100', { key: m.apiKey })).body.data as Array<WalletRef & { is_default: boolean }>;
  ethWallet = list.find((w) => w.is_default && w.chain === 'ethereum')!;
  solWallet = list.find((w) => w.is_default && w.chain === 'solana')!;
  await sol.createAssociatedTokenAccount(solWallet.address, mint.mint);
}, 180_000);

afterAll(async () => {
  server?.close();
  await t?.stop();
  await closeClients();
  await chain?.stop();
  await sol?.stop();
});

describe('the 402 speaks both wires', () => {
  it('PAYMENT-REQUIRED is an x402 v2 PaymentRequired @x402/core accepts; X-PAYMENT-REQUIRED is the spec challenge', async () => {
    const r = await fetch(`${base}/report?wire=1`);
    expect(r.status).toBe(402);
    const v2 = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    const flat = decodeChallenge(r.headers.get('x-payment-required'))!;
    expect(v2).toMatchObject({
      x402Version: 2,
      resource: { url: `${base}/report?wire=1`, description: 'one report' },
      accepts: [
        {
          scheme: 'exact',
          network: `eip155:${chain.chainId}`,
          amount: '1000000',
          asset: usdc.address,
          payTo: ethWallet.address,
          extra: { name: 'USD Coin', version: '2', challengeId: flat.memo },
        },
      ],
    });
    expect(v2.accepts[0].maxTimeoutSeconds).toBeGreaterThan(200);
    expect(flat).toMatchObject({ version: '1', network: 'testnet', amount: '1000000', resource: '/report?wire=1' });
    // a client that reads the spec's challenge from PAYMENT-REQUIRED still finds it there
    expect(decodeChallenge(r.headers.get('payment-required'))).toMatchObject({ memo: flat.memo, payTo: flat.payTo, amount: '1000000' });
  });

  it('a challenge below the rail minimum is a 400', async () => {
    const r = await t.request('POST', '/v1/x402/challenges', {
      key: m.apiKey,
      body: { resource: '/tiny', amount_subunits: '9999', paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' } },
    });
    expect([r.status, r.body.code, r.body.field]).toEqual([400, 3, 'amount_subunits']);
  });
});

describe('@x402/fetch + @x402/evm on Hardhat', () => {
  it('pays a requirePayment endpoint: 200, a v2 SettleResponse, 1 USDC moved once on chain and in the ledger; a replay is refused', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await usdc.mint(account.address, 5_000_000n);
    const rec = recording();
    // a local token is no default asset of the client: its spend controls must name it (capped at 2 USDC)
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(account))
      .setSpendControls({ allowedAssets: [{ network: `eip155:${chain.chainId}`, asset: usdc.address, maxAmountPerPayment: '2000000' }] });
    const pay = wrapFetchWithPayment(rec.fetch, client);
    const ledgerBefore = await balanceOf(t, m, ethWallet.id);
    const chainBefore = await usdc.balanceOf(ethWallet.address);
    const started = Date.now();
    const r = await pay(`${base}/report?id=evm`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('paid content of /report?id=evm');
    const settled = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: `eip155:${chain.chainId}`, payer: account.address });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    console.log(`@x402/fetch + @x402/evm paid round trip: ${Date.now() - started} ms`);
    expect(await usdc.balanceOf(account.address)).toBe(4_000_000n);
    expect(await usdc.balanceOf(ethWallet.address)).toBe(chainBefore + 1_000_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(ledgerBefore + 1_000_000n);
    // the proof the client sent: a v2 PaymentPayload with a random EIP-3009 nonce, naming the challenge
    const proof = rec.sent.find((h) => h['payment-signature'])!['payment-signature'];
    const payload = decodeHeader(proof) as { x402Version: number; accepted: { extra: { challengeId: string } } };
    expect(payload.x402Version).toBe(2);
    const challengeId = payload.accepted.extra.challengeId;
    const evs = (await events('x402.settled')).filter((e) => e.challenge_id === challengeId);
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({ amount_subunits: '1000000', wallet_id: ethWallet.id, tx_hash: settled.transaction });

    const replays = await Promise.all([1, 2, 3].map(() => fetch(`${base}/report?id=evm`, { headers: { 'PAYMENT-SIGNATURE': proof } })));
    expect(replays.map((x) => x.status)).toEqual([402, 402, 402]);
    expect(((await replays[0].json()) as { error: string }).error).toMatch(/^already_redeemed/);
    expect(await usdc.balanceOf(account.address)).toBe(4_000_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(ledgerBefore + 1_000_000n);
    const c = await t.request('GET', `/v1/x402/challenges/${challengeId}`, { key: m.apiKey });
    expect(c.body.status).toBe('redeemed');
  });
});

describe('@x402/fetch + @x402/svm on the LiteSVM harness', () => {
  it("pays a requirePayment endpoint with the exact SVM scheme's partially signed transaction, co-signed by the gas wallet", async () => {
    const kp = Keypair.generate();
    const owner = kp.publicKey.toBase58();
    await sol.mintTo(mint.mint, owner, 10_000_000n);
    const signer = toClientSvmSigner(await createKeyPairSignerFromBytes(kp.secretKey));
    const network = decodePaymentRequiredHeader((await fetch(`${base}/sol/probe`)).headers.get('payment-required')!).accepts[0].network;
    // the harness names itself by its genesis hash; @x402/svm knows the public clusters' ids and is given the RPC
    expect(network).toMatch(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/);
    const client = new x402Client()
      .register('solana:*', new ExactSvmScheme(signer, { rpcUrl: sol.url }))
      .setSpendControls({ allowedAssets: [{ network, asset: mint.mint, maxAmountPerPayment: '5000000' }] });
    const rec = recording();
    const pay = wrapFetchWithPayment(rec.fetch, client);
    const ledgerBefore = await balanceOf(t, m, solWallet.id);
    const chainBefore = await sol.tokenBalance(solWallet.address, mint.mint);
    const r = await pay(`${base}/sol/data`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('paid content of /sol/data');
    const settled = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network, payer: owner });
    expect(await sol.tokenBalance(owner, mint.mint)).toBe(8_000_000n);
    expect(await sol.tokenBalance(solWallet.address, mint.mint)).toBe(chainBefore + 2_000_000n);
    expect(await balanceOf(t, m, solWallet.id)).toBe(ledgerBefore + 2_000_000n);
    const proof = rec.sent.find((h) => h['payment-signature'])!['payment-signature'];
    const replays = await Promise.all([1, 2].map(() => fetch(`${base}/sol/data`, { headers: { 'PAYMENT-SIGNATURE': proof } })));
    expect(replays.map((x) => x.status)).toEqual([402, 402]);
    expect(await sol.tokenBalance(owner, mint.mint)).toBe(8_000_000n);
    expect(await balanceOf(t, m, solWallet.id)).toBe(ledgerBefore + 2_000_000n);
  });
});

describe('@x402/express with HTTPFacilitatorClient pointed at this service', () => {
  let app: Server;
  let appUrl: string;
  const key = () => ({ 'X-API-Key': m.apiKey });
  const facilitatorUrl = () => `${t.url}/v1/x402/facilitator`;

  beforeAll(async () => {
    const facilitator = new HTTPFacilitatorClient({
      url: facilitatorUrl(),
      createAuthHeaders: async () => ({ verify: key(), settle: key(), supported: key() }),
    });
    const network = `eip155:${chain.chainId}` as const;
    const resourceServer = new x402ResourceServer(facilitator).register(network, new ExactEvmServerScheme());
    const e = express();
    e.use(
      paymentMiddleware(
        {
          'GET /weather': {
            accepts: {
              scheme: 'exact',
              network,
              payTo: ethWallet.address,
              price: { amount: '1000000', asset: usdc.address, extra: { name: 'USD Coin', version: '2' } },
              maxTimeoutSeconds: 120,
            },
            description: 'the weather',
          },
        },
        resourceServer,
      ),
    );
    e.get('/weather', (_req, res) => {
      res.json({ forecast: 'sunny' });
    });
    app = await new Promise<Server>((r) => {
      const s = e.listen(0, '127.0.0.1', () => r(s));
    });
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  afterAll(() => app?.close());

  it('GET /supported names the chains it settles on, with the Solana fee payer; it needs the API key', async () => {
    const r = await t.request('GET', '/v1/x402/facilitator/supported', { key: m.apiKey });
    expect(r.status).toBe(200);
    expect(r.body.kinds).toEqual(
      expect.arrayContaining([
        { x402Version: 2, scheme: 'exact', network: `eip155:${chain.chainId}` },
        expect.objectContaining({
          x402Version: 2,
          scheme: 'exact',
          network: expect.stringMatching(/^solana:/),
          extra: { feePayer: expect.any(String) },
        }),
      ]),
    );
    expect((await t.request('GET', '/v1/x402/facilitator/supported')).status).toBe(401);
  });

  it('paymentMiddleware verifies and settles through the service: paid on chain, credited once in the ledger; a replay is refused', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await usdc.mint(account.address, 3_000_000n);
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(account))
      .setSpendControls({ allowedAssets: [{ network: `eip155:${chain.chainId}`, asset: usdc.address, maxAmountPerPayment: '2000000' }] });
    const rec = recording();
    const ledgerBefore = await balanceOf(t, m, ethWallet.id);
    const chainBefore = await usdc.balanceOf(ethWallet.address);
    const r = await wrapFetchWithPayment(rec.fetch, client)(`${appUrl}/weather`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ forecast: 'sunny' });
    const settled = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: `eip155:${chain.chainId}`, payer: account.address });
    expect(await usdc.balanceOf(account.address)).toBe(2_000_000n);
    expect(await usdc.balanceOf(ethWallet.address)).toBe(chainBefore + 1_000_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(ledgerBefore + 1_000_000n);
    const evs = (await events('x402.settled')).filter((e) => e.tx_hash === settled.transaction);
    expect(evs).toHaveLength(1);
    expect(String(evs[0].challenge_id)).toMatch(/^xfs_/);
    const c = await t.request('GET', `/v1/x402/challenges/${String(evs[0].challenge_id)}`, { key: m.apiKey });
    expect(c.body).toMatchObject({ status: 'redeemed', challenge: { amount: '1000000', payTo: ethWallet.address } });

    const proof = rec.sent.find((h) => h['payment-signature'])!['payment-signature'];
    const replay = await fetch(`${appUrl}/weather`, { headers: { 'PAYMENT-SIGNATURE': proof } });
    expect(replay.status).toBe(402);
    expect(await usdc.balanceOf(account.address)).toBe(2_000_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(ledgerBefore + 1_000_000n);
    // settled again directly: refused, nothing moves
    const payload = decodeHeader(proof)!;
    const again = await t.request('POST', '/v1/x402/facilitator/settle', {
      key: m.apiKey,
      body: { x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted },
    });
    expect(again.body).toMatchObject({ success: false, errorReason: 'already_redeemed' });
    const verified = await t.request('POST', '/v1/x402/facilitator/verify', {
      key: m.apiKey,
      body: { x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted },
    });
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'already_redeemed' });
  });

  it('settles a Solana payment built by @x402/svm for the fee payer /supported names', async () => {
    const sup = await t.request('GET', '/v1/x402/facilitator/supported', { key: m.apiKey });
    const kind = (sup.body.kinds as Array<{ network: string; extra?: { feePayer: string } }>).find((k) => k.network.startsWith('solana:'))!;
    const requirements = {
      scheme: 'exact',
      network: kind.network,
      amount: '1000000',
      asset: mint.mint,
      payTo: solWallet.address,
      maxTimeoutSeconds: 60,
      extra: { feePayer: kind.extra!.feePayer },
    };
    const kp = Keypair.generate();
    const owner = kp.publicKey.toBase58();
    await sol.mintTo(mint.mint, owner, 3_000_000n);
    const signer = toClientSvmSigner(await createKeyPairSignerFromBytes(kp.secretKey));
    const p = await new ExactSvmScheme(signer, { rpcUrl: sol.url }).createPaymentPayload(2, requirements as never);
    const body = { x402Version: 2, paymentPayload: { ...p, accepted: requirements }, paymentRequirements: requirements };
    const ledgerBefore = await balanceOf(t, m, solWallet.id);
    const chainBefore = await sol.tokenBalance(solWallet.address, mint.mint);
    expect((await t.request('POST', '/v1/x402/facilitator/verify', { key: m.apiKey, body })).body).toEqual({ isValid: true, payer: owner });
    const settled = await t.request('POST', '/v1/x402/facilitator/settle', { key: m.apiKey, body });
    expect(settled.body).toMatchObject({ success: true, network: kind.network, payer: owner });
    expect(await sol.tokenBalance(owner, mint.mint)).toBe(2_000_000n);
    expect(await sol.tokenBalance(solWallet.address, mint.mint)).toBe(chainBefore + 1_000_000n);
    expect(await balanceOf(t, m, solWallet.id)).toBe(ledgerBefore + 1_000_000n);
    const again = await t.request('POST', '/v1/x402/facilitator/settle', { key: m.apiKey, body });
    expect(again.body).toMatchObject({ success: false, errorReason: 'already_redeemed' });
    expect(await sol.tokenBalance(owner, mint.mint)).toBe(2_000_000n);
  });

  it("settles only into the merchant's own wallets: another payTo is a 403; wrong terms are isValid false", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await usdc.mint(account.address, 1_000_000n);
    const other = await registerMerchant(t);
    const otherWallet = (
      await t.request('POST', '/v1/wallets', { key: other.apiKey, body: { type: 'merchant', chain: 'ethereum', network: 'testnet' } })
    ).body as WalletRef;
    const accepted = {
      scheme: 'exact',
      network: `eip155:${chain.chainId}`,
      amount: '1000000',
      asset: usdc.address,
      payTo: otherWallet.address,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    };
    const payload = await new ExactEvmScheme(account).createPaymentPayload(2, accepted as never);
    const body = { x402Version: 2, paymentPayload: { ...payload, accepted }, paymentRequirements: accepted };
    for (const path of ['verify', 'settle']) {
      const r = await t.request('POST', `/v1/x402/facilitator/${path}`, { key: m.apiKey, body });
      expect([r.status, r.body.code]).toEqual([403, 7]);
    }
    expect(await usdc.balanceOf(otherWallet.address)).toBe(0n);
    // the same payment to the merchant's own wallet, but the requirements ask for more than was signed
    const mine = { ...accepted, payTo: ethWallet.address };
    const signed = await new ExactEvmScheme(account).createPaymentPayload(2, mine as never);
    const more = { ...mine, amount: '2000000' };
    const r = await t.request('POST', '/v1/x402/facilitator/verify', {
      key: m.apiKey,
      body: { x402Version: 2, paymentPayload: { ...signed, accepted: more }, paymentRequirements: more },
    });
    expect(r.body).toMatchObject({ isValid: false, invalidReason: 'wrong_amount' });
    const tiny = { ...mine, amount: '10' };
    const t2 = await t.request('POST', '/v1/x402/facilitator/verify', {
      key: m.apiKey,
      body: { x402Version: 2, paymentPayload: { ...signed, accepted: tiny }, paymentRequirements: tiny },
    });
    expect(t2.body).toMatchObject({ isValid: false, invalidReason: 'amount_below_minimum' });
    const ok = await t.request('POST', '/v1/x402/facilitator/verify', {
      key: m.apiKey,
      body: { x402Version: 2, paymentPayload: { ...signed, accepted: mine }, paymentRequirements: mine },
    });
    expect(ok.body).toEqual({ isValid: true, payer: account.address });

    // the merchant's rail policy: a payment on a rail it excludes is refused before anything is read or moved
    expect((await t.request('PUT', '/v1/me/rail-policy', { key: m.apiKey, body: { allowed_rails: ['solana:testnet:USDC'] } })).status).toBe(
      200,
    );
    for (const path of ['verify', 'settle']) {
      const refused = await t.request('POST', `/v1/x402/facilitator/${path}`, {
        key: m.apiKey,
        body: { x402Version: 2, paymentPayload: { ...signed, accepted: mine }, paymentRequirements: mine },
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        field: 'paymentRequirements.network',
        message: expect.stringMatching(/^ethereum:testnet:USDC is not allowed by the merchant's rail policy/),
      });
    }
    expect(await usdc.balanceOf(account.address)).toBe(1_000_000n);
    await t.request('PUT', '/v1/me/rail-policy', { key: m.apiKey, body: { allowed_rails: null } });
  });
});

describe('discovery: published catalog prices an x402 client can buy', () => {
  it('lists them in the bazaar shape at the facilitator; @x402/fetch buys one; the merchant is credited once', async () => {
    const cat = new CatalogClient(t, { key: m.apiKey });
    const shop = await cat.store({ name: 'Weather Co', slug: `weather-${Date.now()}` });
    const product = await cat.product(shop.id, { name: 'Forecasts', slug: `forecasts-${Date.now()}`, fulfillment_type: 'service' });
    const plan = await cat.plan(product.id, { name: 'One forecast', slug: 'one', entitlement: { forecasts: 1 } });
    const price = await cat.price(plan.id, {
      amount_subunits: '1500000',
      currency_or_token: 'USDC',
      allowed_payment_methods: ['ethereum:testnet:USDC'],
    });
    for (const [c, id] of [
      ['stores', shop.id],
      ['products', product.id],
      ['plans', plan.id],
      ['prices', price.id],
    ])
      await cat.publish(c, id);

    const bazaar = withBazaar(new HTTPFacilitatorClient({ url: `${t.url}/v1/x402/facilitator` }));
    const list = await bazaar.extensions.bazaar.listResources({ type: 'http', network: `eip155:${chain.chainId}` });
    expect(list.x402Version).toBe(2);
    const item = list.items.find((i) => i.resource.endsWith(`/v1/catalog/prices/${price.id}/x402`))!;
    expect(item).toMatchObject({
      type: 'http',
      x402Version: 2,
      description: 'Forecasts — One forecast',
      serviceName: 'Weather Co',
      accepts: [
        {
          scheme: 'exact',
          network: `eip155:${chain.chainId}`,
          amount: '1500000',
          asset: usdc.address,
          payTo: ethWallet.address,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    });

    const account = privateKeyToAccount(generatePrivateKey());
    await usdc.mint(account.address, 2_000_000n);
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(account))
      .setSpendControls({ allowedAssets: [{ network: `eip155:${chain.chainId}`, asset: usdc.address, maxAmountPerPayment: '2000000' }] });
    const rec = recording();
    const ledgerBefore = await balanceOf(t, m, ethWallet.id);
    const url = `${t.url}/v1/catalog/prices/${price.id}/x402`;
    const r = await wrapFetchWithPayment(rec.fetch, client)(url);
    expect(r.status).toBe(200);
    const bought = (await r.json()) as Record<string, unknown>;
    expect(bought).toMatchObject({
      status: 'paid',
      price_id: price.id,
      plan_id: plan.id,
      product_id: product.id,
      merchant_id: m.id,
      entitlement: { forecasts: 1 },
      amount_subunits: '1500000',
      payer: account.address,
      network: `eip155:${chain.chainId}`,
    });
    expect(decodePaymentResponseHeader(r.headers.get('payment-response')!)).toMatchObject({
      success: true,
      transaction: bought.transaction,
    });
    expect(await usdc.balanceOf(account.address)).toBe(500_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(ledgerBefore + 1_500_000n);
    expect((await events('x402.settled')).filter((e) => e.challenge_id === bought.challenge_id)).toHaveLength(1);

    const proof = rec.sent.find((h) => h['payment-signature'])!['payment-signature'];
    const replay = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': proof } });
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { error: string }).error).toMatch(/^already_redeemed/);
    expect(await usdc.balanceOf(account.address)).toBe(500_000n);
    // an unpublished price is not for sale
    const draft = await cat.price(plan.id, { amount_subunits: '3000000', currency_or_token: 'USDC' });
    expect((await fetch(`${t.url}/v1/catalog/prices/${draft.id}/x402`)).status).toBe(404);
  });
});
