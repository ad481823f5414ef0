/**
 * One settlement per challenge, whatever pays it, and money that reached payTo is never lost (issue 18,
 * leaks 4 and 5), on Hardhat with TestUSDC (EIP-3009):
 *  - an EIP-3009 redeem in flight and an agent spend of the same challenge: exactly one pays, both orders;
 *  - an authorization front-run by someone else (before our simulation, or in the mempool ahead of our
 *    transaction) paid payTo: the token's AuthorizationUsed log credits it, once; a payer who used the
 *    same nonce to pay someone else gets nothing credited;
 *  - the settlement's network fee is booked (sys:gas → sys:fees) per the fee policy.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Contract, Wallet, hexlify, parseEther, randomBytes, type HDNodeWallet } from 'ethers';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { requirePayment, decodeChallenge, decodeHeader, type X402Challenge } from '../../sdk/src/x402.ts';
import { signEip3009Proof } from '../../lib/x402/payer.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { splitSignature, TRANSFER_WITH_AUTHORIZATION_TYPES, type Eip3009Authorization } from '../../lib/x402/proof.ts';
import { encodeHeader } from '../../lib/x402/challenge.ts';
import { EIP3009_ABI } from '../../lib/x402/settle.ts';
import { POLICY, balanceOf, createWallet, fund, type WalletRef } from './agents-helpers.ts';

let chain: HardhatNode;
let usdc: TestUsdc;
let t: TestNode;
let m: RegisteredMerchant;
let store: Store;
let server: Server;
let base: string;
let payTo: WalletRef;
let agent: WalletRef;

beforeAll(async () => {
  chain = await startHardhatNode();
  usdc = await chain.deployTestUsdc();
  t = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: chain.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    RATE_LIMIT_PER_MINUTE: '100000',
    CHAIN_POLL_INTERVAL_MS: '60000',
    // a redeem whose transaction is not mined answers 202 quickly (automine off below)
    X402_SETTLE_TIMEOUT_MS: '1500',
    AGENTS_SCAN_INTERVAL_MS: '300',
    BROADCAST_POLL_INTERVAL_MS: '200',
  });
  store = await openStore(`sqlite:${join(t.dataDir, 'service.db')}`);
  m = await registerMerchant(t);
  const pay = requirePayment({
    serviceUrl: t.url,
    apiKey: m.apiKey,
    amount_subunits: '1000000',
    paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
  });
  server = createServer((req, res) => pay(req, res, () => res.end(`paid ${req.url}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const first = await fetch(`${base}/warmup`);
  await (
    await chain.wallet(0).sendTransaction({ to: ((await first.json()) as { fee_payer: string }).fee_payer, value: parseEther('10') })
  ).wait();
  const list = (await t.request('GET', '/v1/wallets?limit=100', { key: m.apiKey })).body.data as Array<WalletRef & { is_default: boolean }>;
  payTo = list.find((w) => w.is_default && w.chain === 'ethereum')!;
  agent = await createWallet(t, m, 'agent', 'ethereum', 'testnet');
  await fund(t, m, agent, 5_000_000n);
  await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY });
}, 180_000);

afterAll(async () => {
  server?.close();
  await store?.close();
  await t?.stop();
  await closeClients();
  await chain?.stop();
});

async function challengeFor(path: string): Promise<X402Challenge> {
  const r = await fetch(`${base}${path}`);
  expect(r.status).toBe(402);
  return decodeChallenge(r.headers.get('x-payment-required'))!;
}

async function signFor(payer: Wallet | HDNodeWallet, c: X402Challenge, to?: string): Promise<string> {
  const block = await chain.provider.getBlock('latest');
  return signEip3009Proof(payer, to ? { ...c, payTo: to } : c, {
    chainId: chain.chainId,
    tokenName: 'Test USD Coin',
    tokenVersion: '2',
    nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
  });
}

/** an x402 v1 X-PAYMENT header: an EIP-3009 authorization of `value` to the challenge's payTo, naming no challenge */
async function v1Payment(payer: Wallet | HDNodeWallet, c: X402Challenge, value: bigint): Promise<string> {
  const block = await chain.provider.getBlock('latest');
  const authorization = {
    from: payer.address,
    to: c.payTo!,
    value: String(value),
    validAfter: '0',
    validBefore: String(Math.max(block!.timestamp, Math.floor(Date.now() / 1000)) + 300),
    nonce: hexlify(randomBytes(32)),
  };
  const domain = { name: 'Test USD Coin', version: '2', chainId: chain.chainId, verifyingContract: usdc.address };
  const signature = await payer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  return encodeHeader({ x402Version: 1, scheme: 'exact', network: 'hardhat', payload: { signature, authorization } });
}

/** what a front-runner does with an authorization it saw: submits it itself */
async function submitElsewhere(proof: string, from = 5) {
  const p = decodeHeader(proof) as { payload: { signature: string; authorization: Eip3009Authorization } };
  const a = p.payload.authorization;
  const { v, r, s } = splitSignature(p.payload.signature);
  const token = new Contract(usdc.address, EIP3009_ABI, chain.wallet(from));
  return token.getFunction('transferWithAuthorization')(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s, {
    gasPrice: parseEther('0.0000002'),
    gasLimit: 200_000n, // no estimate: against the pending block (ours in it) it would revert
  });
}

const spend = (c: X402Challenge) =>
  t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
    key: m.apiKey,
    body: {
      target: c.payTo,
      amount: 1,
      amount_subunits: '1000000',
      token_symbol: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      reference: c.memo,
    },
  });

const payWith = (path: string, proof: string) => fetch(`${base}${path}`, { headers: { 'X-Service-Payment': proof } });

describe('one payment per challenge across proof types', () => {
  it('an EIP-3009 redeem in flight, then an agent spend: the spend is refused, the proof is served once it lands', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/once/a');
    const proof = await signFor(payer, c);
    const agentBefore = await balanceOf(t, m, agent.id);
    const walletBefore = await balanceOf(t, m, payTo.id);
    await chain.setAutomine(false);
    try {
      const pending = await payWith('/once/a', proof);
      expect(pending.status).toBe(202);
      const a = await spend(c);
      expect(a.body).toMatchObject({ status: 'denied', reason: 'challenge_closed' });
      expect(await balanceOf(t, m, agent.id)).toBe(agentBefore);
    } finally {
      await chain.setAutomine(true);
    }
    await chain.mine();
    let served: Response | null = null;
    for (let i = 0; i < 40 && served?.status !== 200; i++) {
      served = await payWith('/once/a', proof);
      if (served.status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(served!.status).toBe(200);
    expect(await balanceOf(t, m, payTo.id)).toBe(walletBefore + 1_000_000n);
    expect(await usdc.balanceOf(payer.address)).toBe(0n);
    expect((await payWith('/once/a', proof)).status).toBe(402);
  });

  it('an agent spend first, then an EIP-3009 proof: the proof is refused before anything is sent; the agent is served', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/once/b');
    const a = await spend(c);
    expect(a.body).toMatchObject({ status: 'pending', settlement: { status: 'settled' } });
    const r = await payWith('/once/b', await signFor(payer, c));
    expect(r.status).toBe(402);
    expect(((await r.json()) as { error: string }).error).toMatch(/^already_redeemed/);
    expect(await usdc.balanceOf(payer.address)).toBe(1_000_000n);
    expect((await payWith('/once/b', a.body.spend_reference)).status).toBe(200);
  });
});

describe('x402 v1 (X-PAYMENT)', () => {
  it('a v1 payload names no challenge: the open challenge of that resource with its payTo and amount is paid, once', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/v1/pay');
    const header = await v1Payment(payer, c, 1_000_000n);
    const before = await balanceOf(t, m, payTo.id);
    const r = await fetch(`${base}/v1/pay`, { headers: { 'X-PAYMENT': header } });
    expect(r.status).toBe(200);
    expect(decodeHeader(r.headers.get('payment-response'))).toMatchObject({ success: true, challenge_id: c.memo, payer: payer.address });
    expect(await balanceOf(t, m, payTo.id)).toBe(before + 1_000_000n);
    expect((await fetch(`${base}/v1/pay`, { headers: { 'X-PAYMENT': header } })).status).toBe(402);
    expect(await usdc.balanceOf(payer.address)).toBe(0n);
  });

  it('finds its challenge behind more than a page of newer ones that agent wallets paid (their rows stay open)', async () => {
    // a resource at 0.1 USDC, paid 25 times by an agent wallet of its own (within its policy's window)
    const price = 100_000n;
    const busy = createServer(
      (req, res) =>
        void requirePayment({
          serviceUrl: t.url,
          apiKey: m.apiKey,
          amount_subunits: String(price),
          paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
        })(req, res, () => res.end('paid')),
    );
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(busy.address() as AddressInfo).port}/v1/busy`;
    const other = await createWallet(t, m, 'agent', 'ethereum', 'testnet');
    await fund(t, m, other, 3_000_000n);
    await t.request('PUT', `/v1/agent-wallets/${other.id}/policy`, { key: m.apiKey, body: POLICY });
    const challenge = async () => decodeChallenge((await fetch(url)).headers.get('x-payment-required'))!;
    try {
      const payer = Wallet.createRandom();
      await usdc.mint(payer.address, price);
      const c = await challenge();
      for (let i = 0; i < 25; i++) {
        const newer = await challenge();
        const a = await t.request('POST', `/v1/agent-wallets/${other.id}/spend-attempts`, {
          key: m.apiKey,
          body: {
            target: newer.payTo,
            amount: 0.1,
            amount_subunits: String(price),
            token_symbol: 'USDC',
            chain: 'ethereum',
            network: 'testnet',
            reference: newer.memo,
          },
        });
        expect(a.body).toMatchObject({ status: 'pending', settlement: { status: 'settled' } });
        expect((await fetch(url, { headers: { 'X-Service-Payment': a.body.spend_reference } })).status).toBe(200);
      }
      const header = await v1Payment(payer, c, price);
      const r = await fetch(url, { headers: { 'X-PAYMENT': header } });
      expect(r.status).toBe(200);
      expect(decodeHeader(r.headers.get('payment-response'))).toMatchObject({ success: true, challenge_id: c.memo });
    } finally {
      busy.close();
    }
  }, 120_000);
});

describe('an EIP-3009 authorization used by someone else', () => {
  const feeBooked = async (challengeId: string) => store.get<{ id: string; amount: string }>('ledger_transfers', `fee:x402:${challengeId}`);

  it('submitted before the proof is presented: payTo was paid, so it is credited once (with that transaction)', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/front/a');
    const proof = await signFor(payer, c);
    const before = await balanceOf(t, m, payTo.id);
    const onChain = await usdc.balanceOf(payTo.address);
    const theirs = await (await submitElsewhere(proof)).wait();
    expect(await usdc.balanceOf(payTo.address)).toBe(onChain + 1_000_000n);
    const r = await payWith('/front/a', proof);
    expect(r.status).toBe(200);
    expect(decodeHeader(r.headers.get('payment-response'))).toMatchObject({ success: true, transaction: theirs.hash });
    expect(await balanceOf(t, m, payTo.id)).toBe(before + 1_000_000n);
    expect((await payWith('/front/a', proof)).status).toBe(402);
    expect(await balanceOf(t, m, payTo.id)).toBe(before + 1_000_000n);
    // nothing of ours was sent: no fee
    expect(await feeBooked(c.memo!)).toBeNull();
  });

  it('ahead of our transaction in the same block: ours reverts (its fee booked), theirs settles the challenge', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/front/b');
    const proof = await signFor(payer, c);
    const before = await balanceOf(t, m, payTo.id);
    let theirs: { hash: string };
    await chain.setAutomine(false);
    try {
      expect((await payWith('/front/b', proof)).status).toBe(202);
      theirs = await submitElsewhere(proof); // a higher gas price: mined first
      await chain.mine();
    } finally {
      await chain.setAutomine(true);
    }
    let served: Response | null = null;
    for (let i = 0; i < 40 && served?.status !== 200; i++) {
      served = await payWith('/front/b', proof);
      if (served.status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(served!.status).toBe(200);
    expect(decodeHeader(served!.headers.get('payment-response'))).toMatchObject({ success: true, transaction: theirs!.hash });
    expect(await balanceOf(t, m, payTo.id)).toBe(before + 1_000_000n);
    const fee = await feeBooked(c.memo!);
    expect(BigInt(fee!.amount)).toBeGreaterThan(0n);
  });

  it('a payer who used the same nonce to pay someone else first gets nothing credited', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/front/c');
    const proof = await signFor(payer, c);
    // the same nonce (keccak of the memo), signed to another address, submitted first
    const elsewhere = await signFor(payer, c, Wallet.createRandom().address);
    await (await submitElsewhere(elsewhere)).wait();
    const before = await balanceOf(t, m, payTo.id);
    const r = await payWith('/front/c', proof);
    expect(r.status).toBe(402);
    expect(((await r.json()) as { error: string }).error).toMatch(/^settlement_failed/);
    expect(await balanceOf(t, m, payTo.id)).toBe(before);
  });

  it('the network fee of a settlement is a platform cost: sys:gas → sys:fees in ETH', async () => {
    const payer = Wallet.createRandom();
    await usdc.mint(payer.address, 1_000_000n);
    const c = await challengeFor('/fee');
    expect((await payWith('/fee', await signFor(payer, c))).status).toBe(200);
    const fee = await store.get<{ id: string; amount: string; debit_account: string; credit_account: string; asset: string }>(
      'ledger_transfers',
      `fee:x402:${c.memo}`,
    );
    expect(fee).toMatchObject({ asset: 'ethereum:testnet:ETH' });
    expect(fee!.debit_account).toContain('sys:gas');
    expect(fee!.credit_account).toContain('sys:fees');
    expect(BigInt(fee!.amount)).toBeGreaterThan(0n);
  });
});
