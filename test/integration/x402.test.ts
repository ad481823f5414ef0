/**
 * x402 end to end: a merchant's resource server using the SDK's requirePayment, paid by (a) an EIP-3009
 * authorization signed by an outside key on the Hardhat node, (b) a Solana payer on the LiteSVM harness,
 * (c) payingFetch with an agent wallet. Replays (also concurrent) and expired challenges are refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Wallet, parseEther } from 'ethers';
import { Connection, Keypair } from '@solana/web3.js';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness, type MintInfo } from '../harness/solana-rpc.ts';
import { requirePayment, payingFetch, decodeChallenge, decodeHeader } from '../../sdk/src/x402.ts';
import { signEip3009Proof, buildSolanaProof } from '../../lib/x402/payer.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { referenceId } from '../../lib/agents/attempt.ts';
import type { ChallengePaymentDoc } from '../../lib/x402/model.ts';
import { POLICY, balanceOf, createWallet, fund, type WalletRef } from './agents-helpers.ts';

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
let skewMs = 0;

beforeAll(async () => {
  chain = await startHardhatNode();
  usdc = await chain.deployTestUsdc();
  sol = await startSolanaRpc();
  mint = await sol.createMint();
  t = await startTestNode(
    {
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      SOLANA_TESTNET_RPC_URL: sol.url,
      SOLANA_TESTNET_USDC_MINT: mint.mint,
      RATE_LIMIT_PER_MINUTE: '100000',
      CHAIN_POLL_INTERVAL_MS: '60000',
    },
    { now: () => new Date(Date.now() + skewMs) },
  );
  m = await registerMerchant(t);
  const opts = { serviceUrl: t.url, apiKey: m.apiKey, description: 'one report' };
  const payEth = requirePayment({
    ...opts,
    amount_subunits: '1250000',
    paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
  });
  const paySol = requirePayment({
    ...opts,
    amount_subunits: '2000000',
    paymentMethod: { chain: 'solana', network: 'testnet', token: 'USDC' },
  });
  server = createServer((req, res) => {
    const pay = req.url?.startsWith('/sol') ? paySol : payEth;
    pay(req, res, () => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`paid content of ${req.url}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // challenges pay into the merchant's settlement (default) wallet of the chain, created on first need
  await challengeFor('/warmup');
  await challengeFor('/sol/warmup');
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

async function challengeFor(path: string) {
  const r = await fetch(`${base}${path}`);
  expect(r.status).toBe(402);
  // the spec's flat challenge is X-PAYMENT-REQUIRED; PAYMENT-REQUIRED (x402 v2) carries its fields too
  const body = (await r.json()) as { fee_payer: string; error: string };
  const challenge = decodeChallenge(r.headers.get('x-payment-required'))!;
  expect(decodeChallenge(r.headers.get('payment-required'))).toMatchObject({ memo: challenge.memo, payTo: challenge.payTo });
  return { challenge, fee_payer: body.fee_payer, body };
}

describe('EIP-3009 authorization signed by an outside key (Hardhat)', () => {
  const outside = Wallet.createRandom();
  beforeAll(async () => {
    await usdc.mint(outside.address, 50_000_000n);
    const { fee_payer } = await challengeFor('/warmup');
    await (await chain.wallet(0).sendTransaction({ to: fee_payer, value: parseEther('10') })).wait();
  });
  const sign = async (c: ReturnType<typeof decodeChallenge>) => {
    const block = await chain.provider.getBlock('latest');
    return signEip3009Proof(outside, c!, {
      chainId: chain.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
    });
  };

  it('402 with the spec challenge, then the paid retry is settled on chain and served once', async () => {
    const { challenge } = await challengeFor('/report?id=1');
    expect(Object.keys(challenge).sort()).toEqual([
      'amount',
      'asset',
      'description',
      'maxAmountRequired',
      'memo',
      'network',
      'payTo',
      'recipient',
      'resource',
      'scheme',
      'version',
    ]);
    expect(challenge).toMatchObject({
      scheme: 'exact',
      network: 'testnet',
      amount: '1250000',
      asset: usdc.address,
      payTo: ethWallet.address,
      resource: '/report?id=1',
    });
    const proof = await sign(challenge);
    const paid = await fetch(`${base}/report?id=1`, { headers: { 'X-Service-Payment': proof } });
    expect(paid.status).toBe(200);
    expect(await paid.text()).toBe('paid content of /report?id=1');
    const receipt = decodeHeader(paid.headers.get('payment-response'));
    expect(receipt).toMatchObject({ success: true, challenge_id: challenge.memo, payer: outside.address });
    expect(await usdc.balanceOf(ethWallet.address)).toBe(1_250_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(1_250_000n);

    const replay = await fetch(`${base}/report?id=1`, { headers: { 'X-Service-Payment': proof } });
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { error: string }).error).toMatch(/^already_redeemed/);
    expect(await usdc.balanceOf(ethWallet.address)).toBe(1_250_000n);
  });

  it('concurrent redeems of one proof: exactly one is served, the money moves once', async () => {
    const before = await usdc.balanceOf(ethWallet.address);
    const { challenge } = await challengeFor('/report?id=2');
    const proof = await sign(challenge);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => fetch(`${base}/report?id=2`, { headers: { 'X-Service-Payment': proof } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402, 402, 402, 402, 402]);
    expect(await usdc.balanceOf(ethWallet.address)).toBe(before + 1_250_000n);
  });

  it('refuses a proof for another resource, a wrong amount, and an expired challenge', async () => {
    const { challenge } = await challengeFor('/report?id=3');
    const proof = await sign(challenge);
    const other = await fetch(`${base}/report?id=4`, { headers: { 'X-Service-Payment': proof } });
    expect(((await other.json()) as { error: string }).error).toMatch(/^wrong_resource/);
    // an authorization field beyond uint256 is bad input (400), not a server error
    const raw = decodeHeader(proof)! as { payload: { authorization: Record<string, string> } };
    raw.payload.authorization.validBefore = '9'.repeat(78);
    const huge = await t.request('POST', '/v1/x402/redeem', {
      key: m.apiKey,
      body: { proof: Buffer.from(JSON.stringify(raw)).toString('base64'), resource: '/report?id=3' },
    });
    expect([huge.status, huge.body.code]).toEqual([400, 3]);
    const cheap = await sign({ ...challenge, amount: '1' });
    expect(
      ((await (await fetch(`${base}/report?id=3`, { headers: { 'X-Service-Payment': cheap } })).json()) as { error: string }).error,
    ).toMatch(/^wrong_amount/);
    const { challenge: late } = await challengeFor('/report?id=5');
    const lateProof = await sign(late);
    skewMs = 6 * 60_000; // past the 5-minute challenge lifetime
    try {
      const r = await fetch(`${base}/report?id=5`, { headers: { 'X-Service-Payment': lateProof } });
      expect(r.status).toBe(402);
      expect(((await r.json()) as { error: string }).error).toMatch(/^challenge_expired/);
    } finally {
      skewMs = 0;
    }
    expect(await usdc.balanceOf(outside.address)).toBe(50_000_000n - 2n * 1_250_000n);
  });
});

describe('EIP-3009 refusals that need the chain', () => {
  it('an authorization outside its validity window, and one the token refuses (no balance): nothing is consumed', async () => {
    const broke = Wallet.createRandom();
    const { challenge } = await challengeFor('/report?id=6');
    const now = Math.floor(Date.now() / 1000);
    const stale = await signEip3009Proof(broke, challenge, {
      chainId: chain.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: now - 3600,
      validForSeconds: 60,
    });
    const r1 = await fetch(`${base}/report?id=6`, { headers: { 'X-Service-Payment': stale } });
    expect(((await r1.json()) as { error: string }).error).toMatch(/^authorization_expired/);
    const unfunded = await signEip3009Proof(broke, challenge, {
      chainId: chain.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: now,
    });
    const r2 = await fetch(`${base}/report?id=6`, { headers: { 'X-Service-Payment': unfunded } });
    expect(r2.status).toBe(402);
    expect(((await r2.json()) as { error: string }).error).toMatch(/^settlement_failed/);
    // the challenge is still open: a funded payer can still pay it
    await usdc.mint(broke.address, 1_250_000n);
    expect((await fetch(`${base}/report?id=6`, { headers: { 'X-Service-Payment': unfunded } })).status).toBe(200);
  });

  it('a provider may send the proof as PAYMENT-SIGNATURE', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_250_000n);
    const { challenge } = await challengeFor('/report?id=7');
    const block = await chain.provider.getBlock('latest');
    const proof = await signEip3009Proof(payer, challenge, {
      chainId: chain.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
    });
    const r = await fetch(`${base}/report?id=7`, { headers: { 'PAYMENT-SIGNATURE': proof } });
    expect(r.status).toBe(200);
    expect(decodeHeader(r.headers.get('payment-response'))).toMatchObject({
      success: true,
      challenge_id: challenge.memo,
      payer: payer.address,
    });
    expect(await usdc.balanceOf(payer.address)).toBe(0n);
  });
});

describe('Solana payer (LiteSVM)', () => {
  it('pays with a memo transfer co-signed by the gas wallet; a replay is refused', async () => {
    const payer = Keypair.generate();
    await sol.airdrop(payer.publicKey.toBase58(), 10_000_000n);
    await sol.mintTo(mint.mint, payer.publicKey.toBase58(), 10_000_000n);
    const { challenge, fee_payer } = await challengeFor('/sol/data');
    await sol.airdrop(fee_payer, 1_000_000_000n);
    const { blockhash } = await new Connection(sol.url, 'confirmed').getLatestBlockhash();
    const proof = buildSolanaProof(payer, challenge, { feePayer: fee_payer, recentBlockhash: blockhash });
    const paid = await fetch(`${base}/sol/data`, { headers: { 'X-Service-Payment': proof } });
    expect(paid.status).toBe(200);
    expect(await paid.text()).toBe('paid content of /sol/data');
    expect(await sol.tokenBalance(solWallet.address, mint.mint)).toBe(2_000_000n);
    expect(await sol.tokenBalance(payer.publicKey.toBase58(), mint.mint)).toBe(8_000_000n);
    expect(await balanceOf(t, m, solWallet.id)).toBe(2_000_000n);
    const replay = await Promise.all([1, 2, 3].map(() => fetch(`${base}/sol/data`, { headers: { 'X-Service-Payment': proof } })));
    expect(replay.map((r) => r.status)).toEqual([402, 402, 402]);
    expect(await sol.tokenBalance(solWallet.address, mint.mint)).toBe(2_000_000n);
  });
});

describe('payingFetch with an agent wallet', () => {
  let agent: WalletRef;
  beforeAll(async () => {
    agent = await createWallet(t, m, 'agent', 'ethereum', 'testnet');
    await fund(t, m, agent, 10_000_000n);
    await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY });
  });

  it('meets the 402 with a spend attempt and gets the resource; the ledger moves once; the proof cannot be replayed', async () => {
    const before = await balanceOf(t, m, ethWallet.id);
    const paying = payingFetch(m.apiKey, agent.id, { serviceUrl: t.url });
    const r = await paying(`${base}/agent/report`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('paid content of /agent/report');
    expect(await balanceOf(t, m, agent.id)).toBe(10_000_000n - 1_250_000n);
    expect(await balanceOf(t, m, ethWallet.id)).toBe(before + 1_250_000n);
    const list = await t.request('GET', `/v1/agent-wallets/${agent.id}/spend-attempts`, { key: m.apiKey });
    const a = list.body.data[0];
    expect(a).toMatchObject({ status: 'pending', target: ethWallet.address, settlement: { status: 'settled', execution: 'ledger' } });
    const replay = await fetch(`${base}/agent/report`, { headers: { 'X-Service-Payment': a.spend_reference } });
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { error: string }).error).toMatch(/^already_redeemed/);
  });

  /** the body of a spend attempt paying the challenge's 1.25 USDC */
  const payBody = (c: ReturnType<typeof decodeChallenge>) => ({
    target: c!.payTo,
    amount: 1.25,
    amount_subunits: '1250000',
    token_symbol: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    reference: c!.memo,
  });
  /** a spend attempt of the wallet (the shared agent by default) paying the challenge */
  const payChallenge = (c: ReturnType<typeof decodeChallenge>, walletId = agent.id) =>
    t.request('POST', `/v1/agent-wallets/${walletId}/spend-attempts`, { key: m.apiKey, body: payBody(c) });

  /** another agent wallet of the merchant, funded, under the shared policy */
  const fundedAgent = async (subunits: bigint) => {
    const w = await createWallet(t, m, 'agent', 'ethereum', 'testnet');
    await fund(t, m, w, subunits);
    await t.request('PUT', `/v1/agent-wallets/${w.id}/policy`, { key: m.apiKey, body: POLICY });
    return w;
  };

  it('concurrent redeems of one agent proof: exactly one is served', async () => {
    const { challenge } = await challengeFor('/agent/concurrent');
    const a = await payChallenge(challenge);
    expect(a.body.spend_reference).toBeDefined();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${base}/agent/concurrent`, { headers: { 'X-Service-Payment': a.body.spend_reference } })),
    );
    expect(answers.map((x) => x.status).sort()).toEqual([200, 402, 402, 402, 402]);
    // the challenge reads redeemed, and another wallet's spend to it is refused: paying it buys nothing
    const read = await t.request('GET', `/v1/x402/challenges/${challenge.memo}`, { key: m.apiKey });
    expect(read.body).toMatchObject({ status: 'redeemed', redeemed_at: expect.any(String) });
    const other = await fundedAgent(2_000_000n);
    const again = await payChallenge(challenge, other.id);
    expect(again.body).toMatchObject({ status: 'denied', reason: 'challenge_closed' });
  });

  it("the challenge is the spend's reference: paid again by the same wallet it answers the first attempt, another body is a 409, the money moves once", async () => {
    const { challenge } = await challengeFor('/agent/again');
    const before = await balanceOf(t, m, agent.id);
    // at once (one actor turn) and after: one attempt
    const [a, b] = await Promise.all([payChallenge(challenge), payChallenge(challenge)]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(b.body.id).toBe(a.body.id);
    expect(a.body).toMatchObject({ status: 'pending', settlement: { status: 'settled' } });
    const again = await payChallenge(challenge);
    expect([again.status, again.body.id, again.body.spend_reference]).toEqual([200, a.body.id, a.body.spend_reference]);
    const other = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
      key: m.apiKey,
      body: { ...payBody(challenge), metadata: { order: 'another' } },
    });
    expect([other.status, other.body.code]).toEqual([409, 5]);
    expect(await balanceOf(t, m, agent.id)).toBe(before - 1_250_000n);
    expect((await fetch(`${base}/agent/again`, { headers: { 'X-Service-Payment': a.body.spend_reference } })).status).toBe(200);
    // redeemed, the same request still answers the attempt that paid it
    const late = await payChallenge(challenge);
    expect([late.status, late.body.id]).toEqual([200, a.body.id]);
    // the challenge's payment row is the reference's record: no reference row of its own
    const store = t.node.rt.store;
    const refId = referenceId(agent.id, challenge.memo!);
    expect(await store.get('spend_references', refId)).toBeNull();
    // a payment written before rows carried the request hash: its reference row answers, as it did
    const row = (await store.get<ChallengePaymentDoc>('x402_agent_payments', challenge.memo!))!;
    const { request_hash, version: _, ...older } = row;
    await store.write([
      { op: 'cas', coll: 'x402_agent_payments', doc: older, expected: row.version! },
      { op: 'insert', coll: 'spend_references', doc: { id: refId, attempt_id: a.body.id, request_hash, created_at: row.created_at } },
    ]);
    const legacy = await payChallenge(challenge);
    expect([legacy.status, legacy.body.id]).toEqual([200, a.body.id]);
    const legacyOther = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
      key: m.apiKey,
      body: { ...payBody(challenge), metadata: { order: 'another' } },
    });
    expect(legacyOther.status).toBe(409);
    // a denied attempt's reference answers its denial: the wallet's retry is not a second decision
    const { challenge: closed } = await challengeFor('/agent/denied-ref');
    const poor = await createWallet(t, m, 'agent', 'ethereum', 'testnet');
    await t.request('PUT', `/v1/agent-wallets/${poor.id}/policy`, { key: m.apiKey, body: POLICY });
    const denied = await payChallenge(closed, poor.id);
    expect(denied.body).toMatchObject({ status: 'denied', reason: 'insufficient_funds' });
    await fund(t, m, poor, 2_000_000n);
    const retried = await payChallenge(closed, poor.id);
    expect([retried.status, retried.body.id, retried.body.status]).toEqual([200, denied.body.id, 'denied']);
    expect(await balanceOf(t, m, poor.id)).toBe(2_000_000n);
  });

  it('an agent proof paid before the challenge expired is served after it; an approval after expiry pays nothing', async () => {
    const { challenge } = await challengeFor('/agent/slow');
    const paid = await payChallenge(challenge);
    expect(paid.body).toMatchObject({ status: 'pending', settlement: { status: 'settled' } });
    await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, {
      key: m.apiKey,
      body: { ...POLICY, limits: { 'ethereum:testnet:USDC': { approval_above_subunits: '1000000' } } },
    });
    const { challenge: gated } = await challengeFor('/agent/gated');
    const waiting = await payChallenge(gated);
    expect(waiting.body).toMatchObject({ status: 'approval_required', reason: 'approval_threshold' });
    const before = await balanceOf(t, m, agent.id);
    skewMs = 6 * 60_000; // both challenges have expired
    try {
      const late = await fetch(`${base}/agent/slow`, { headers: { 'X-Service-Payment': paid.body.spend_reference } });
      expect(late.status).toBe(200);
      const approved = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${waiting.body.id}/approve`, {
        key: m.apiKey,
      });
      expect(approved.body).toMatchObject({ status: 'denied', reason: 'challenge_closed' });
      expect(approved.body.ledger_entry_id).toBeUndefined();
      expect(await balanceOf(t, m, agent.id)).toBe(before);
    } finally {
      skewMs = 0;
      await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY });
    }
  });

  it('a challenge is paid by one agent spend only; a redeemed one cannot be paid again as a plain transfer', async () => {
    const second = await fundedAgent(5_000_000n);
    const { challenge } = await challengeFor('/agent/once');
    const [a, b] = await Promise.all([agent, second].map((w) => payChallenge(challenge, w.id)));
    expect([a.body.status, b.body.status].sort()).toEqual(['denied', 'pending']);
    const [paid, refused] = a.body.status === 'pending' ? [a, b] : [b, a];
    expect(refused.body).toMatchObject({ reason: 'challenge_closed' });
    expect(refused.body.ledger_entry_id).toBeUndefined();
    expect((await fetch(`${base}/agent/once`, { headers: { 'X-Service-Payment': paid.body.spend_reference } })).status).toBe(200);
    const third = await fundedAgent(5_000_000n);
    const again = await payChallenge(challenge, third.id);
    expect(again.body).toMatchObject({ status: 'denied', reason: 'challenge_closed' });
    expect(await balanceOf(t, m, third.id)).toBe(5_000_000n);
    const wrong = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
      key: m.apiKey,
      body: {
        target: challenge.payTo,
        amount: 1,
        amount_subunits: '1000000',
        token_symbol: 'USDC',
        chain: 'ethereum',
        network: 'testnet',
        reference: challenge.memo,
      },
    });
    expect([wrong.status, wrong.body.code]).toEqual([400, 3]);
  });

  it('payingFetch names the API domain it pays, so a policy allowing that domain lets it pay', async () => {
    await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, {
      key: m.apiKey,
      body: { ...POLICY, allowed_api_domains: ['127.0.0.1'] },
    });
    try {
      const r = await payingFetch(m.apiKey, agent.id, { serviceUrl: t.url })(`${base}/agent/allowed-domain`);
      expect(r.status).toBe(200);
      const list = await t.request('GET', `/v1/agent-wallets/${agent.id}/spend-attempts?limit=1`, { key: m.apiKey });
      expect(list.body.data[0]).toMatchObject({ status: 'pending', api_domain: '127.0.0.1' });
    } finally {
      await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY });
    }
  });

  it('a policy that denies: payingFetch throws with the reason, nothing is paid', async () => {
    await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, {
      key: m.apiKey,
      body: { ...POLICY, allowed_api_domains: ['elsewhere.example'] },
    });
    const paying = payingFetch(m.apiKey, agent.id, { serviceUrl: t.url });
    await expect(paying(`${base}/agent/other`)).rejects.toThrow(/denied: api_domain_not_allowed/);
  });
});
