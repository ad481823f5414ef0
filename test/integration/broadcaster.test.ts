/**
 * The transaction outbox on real chains (Hardhat node, LiteSVM harness): signed in the piscina pool,
 * persisted before broadcast, resumed by another broadcaster after a "crash" (a row signed and never
 * sent), re-sent unchanged, replaced with the same nonce when it is not mined, confirmed at depth.
 */
import { randomBytes } from 'node:crypto';
import { Mnemonic, Transaction, Wallet } from 'ethers';
import type { Store } from '../../lib/store/index.ts';
import { PoolSigner } from '../../lib/chains/signer.ts';
import { Broadcaster } from '../../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../../lib/chains/broadcast/drivers.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import { startChainEnv, type ChainEnv } from '../helpers/chain-env.ts';
import { until } from './chain-listener-helpers.ts';

const PHRASE = Mnemonic.fromEntropy(randomBytes(16)).phrase;

describe('transaction outbox', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let store: Store;
  let signer: PoolSigner;
  let config: ChainEnv['config'];
  let env: ChainEnv | undefined;
  const make = (over: Partial<ConstructorParameters<typeof Broadcaster>[0]> = {}) =>
    new Broadcaster({
      store,
      driver: configuredDrivers(config, signer),
      pollIntervalMs: 50,
      rebroadcastMs: 1000,
      bumpAfterMs: 600_000,
      log: { warn: () => undefined },
      ...over,
    });
  const settle = async (b: Broadcaster, id: string): Promise<ChainTxDoc> =>
    until(
      `${id} final`,
      async () => {
        await b.scanOnce();
        const d = await store.get<ChainTxDoc>(CHAIN_TXS, id);
        return d && (d.status === 'confirmed' || d.status === 'failed') ? d : null;
      },
      60_000,
    );

  beforeAll(async () => {
    env = await startChainEnv(PHRASE);
    ({ eth, usdc, sol, mint, store, signer, config } = env);
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  it('sends ETH and USDC from the gas wallet with store-allocated nonces; a second create is a no-op', async () => {
    const gas = gasWalletRef('ethereum', 'testnet');
    const from = signer.address(gas);
    await eth.setBalance(from, 10n ** 18n);
    await usdc.mint(from, 5_000_000n);
    const to = Wallet.createRandom().address;
    const b = make();
    const a = await b.create({
      id: 't:eth',
      chain: 'ethereum',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'ethereum', kind: 'native', from: gas, to, value: '123456789' },
    });
    const u = await b.create({
      id: 't:usdc',
      chain: 'ethereum',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'ethereum', kind: 'erc20', from: gas, token: usdc.address, to, amount: '1500000' },
    });
    expect([a.doc.nonce, u.doc.nonce]).toEqual([0, 1]);
    expect(a.doc.attempts[0]!.raw).toMatch(/^0x/);
    const again = await b.create({
      id: 't:eth',
      chain: 'ethereum',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'ethereum', kind: 'native', from: gas, to, value: '999' },
    });
    expect(again).toMatchObject({ created: false, doc: { tx_hash: a.doc.tx_hash } });
    const [da, du] = [await settle(b, 't:eth'), await settle(b, 't:usdc')];
    expect(da).toMatchObject({ status: 'confirmed', tx_hash: a.doc.tx_hash });
    expect(du.status).toBe('confirmed');
    expect(BigInt(da.fee_subunits!)).toBe(21_000n * BigInt(a.doc.attempts[0]!.gas_price!));
    expect(await eth.provider.getBalance(to)).toBe(123456789n);
    expect(await usdc.balanceOf(to)).toBe(1_500_000n);
  });

  it('resumes a row that was signed and persisted but never broadcast (a crashed node): it lands once', async () => {
    const gas = gasWalletRef('ethereum', 'testnet');
    const to = Wallet.createRandom().address;
    const crashed = make();
    const { doc } = await crashed.create({
      id: 't:crash',
      chain: 'ethereum',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'ethereum', kind: 'native', from: gas, to, value: '777' },
    });
    expect(await eth.receipt(doc.tx_hash)).toBeNull(); // nothing was sent
    // a second broadcaster (another node, or the same after a restart) picks the row up once due
    const other = make();
    const final = await settle(other, 't:crash');
    expect(final).toMatchObject({ status: 'confirmed', tx_hash: doc.tx_hash, nonce: doc.nonce });
    // the first node's late step re-sends the same bytes: harmless
    await crashed.step({ ...doc, status: 'signed' }).catch(() => null);
    await eth.mine(1);
    expect(await eth.provider.getBalance(to)).toBe(777n);
  });

  it('replaces a transaction that is not mined with the same nonce and a higher gas price; exactly one lands', async () => {
    const gas = gasWalletRef('ethereum', 'testnet');
    const to = Wallet.createRandom().address;
    const b = make({ bumpAfterMs: 0 });
    await eth.setAutomine(false);
    try {
      const { doc } = await b.create({
        id: 't:bump',
        chain: 'ethereum',
        network: 'testnet',
        purpose: 'test',
        intent: { chain: 'ethereum', kind: 'native', from: gas, to, value: '4242' },
      });
      const sent = await b.step(doc); // broadcast
      await b.step(sent!); // not mined: replaced
      const bumped = (await store.get<ChainTxDoc>(CHAIN_TXS, 't:bump'))!;
      expect(bumped.attempts).toHaveLength(2);
      expect(BigInt(bumped.attempts[1]!.gas_price!)).toBeGreaterThan(BigInt(doc.attempts[0]!.gas_price!));
      expect(Transaction.from(bumped.attempts[1]!.raw).nonce).toBe(doc.nonce);
      await eth.mine(1);
    } finally {
      await eth.setAutomine(true);
    }
    const final = await settle(make(), 't:bump');
    expect(final.status).toBe('confirmed');
    expect(final.tx_hash).toBe((await store.get<ChainTxDoc>(CHAIN_TXS, 't:bump'))!.attempts[1]!.hash);
    expect(await eth.provider.getBalance(to)).toBe(4242n);
  });

  it('sends SOL and SPL USDC with the gas wallet as fee payer, creating the recipient token account', async () => {
    const gas = gasWalletRef('solana', 'testnet');
    await sol.airdrop(signer.address(gas), 1_000_000_000n);
    const sender = { role: 'deposit' as const, chain: 'solana' as const, index: 3 };
    const senderAddress = signer.address(sender);
    await sol.airdrop(senderAddress, 2_000_000n);
    await sol.mintTo(mint.mint, senderAddress, 9_000_000n);
    const to = (await sol.newWallet(0n)).address;
    const b = make();
    await b.create({
      id: 't:sol',
      chain: 'solana',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'solana', kind: 'native', from: sender, to: (await sol.newWallet(0n)).address, lamports: '2000000', fee_payer: gas },
    });
    const spl = await b.create({
      id: 't:spl',
      chain: 'solana',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'solana', kind: 'spl', from: sender, mint: mint.mint, decimals: 6, to, amount: '9000000', fee_payer: gas },
    });
    expect(spl.doc.attempts[0]).toMatchObject({ blockhash: expect.any(String), last_valid_height: expect.any(Number) });
    const [ds, dt] = [await settle(b, 't:sol'), await settle(b, 't:spl')];
    expect(ds.status).toBe('confirmed');
    expect(dt.status).toBe('confirmed');
    expect(sol.balance(senderAddress)).toBe(0n); // the fee payer paid the fee: the sender sent all it had
    expect(await sol.tokenBalance(to, mint.mint)).toBe(9_000_000n);
    expect(await sol.tokenBalance(senderAddress, mint.mint)).toBe(0n);
    expect(BigInt(ds.fee_subunits!)).toBe(10_000n);
  });

  it('Solana: re-sends the same bytes while the blockhash is valid, signs anew only after it expired; lands once', async () => {
    const gas = gasWalletRef('solana', 'testnet');
    const sender = { role: 'deposit' as const, chain: 'solana' as const, index: 9 };
    await sol.airdrop(signer.address(gas), 100_000_000n);
    const to = (await sol.newWallet(0n)).address;
    const b = make({ rebroadcastMs: 0 });
    // the sender has nothing yet: every send is refused by the node's preflight, nothing lands
    const { doc } = await b.create({
      id: 't:expiry',
      chain: 'solana',
      network: 'testnet',
      purpose: 'test',
      intent: { chain: 'solana', kind: 'native', from: sender, to, lamports: '1500000', fee_payer: gas },
    });
    for (let i = 0; i < 3; i++) await b.process('t:expiry');
    let row = (await store.get<ChainTxDoc>(CHAIN_TXS, 't:expiry'))!;
    expect(row.attempts).toHaveLength(1); // still valid: never signed again
    expect(row.broadcasts).toBeGreaterThanOrEqual(3);
    expect(row.last_error).toMatch(/simulation|insufficient|debit/i);
    sol.advanceSlots(doc.attempts[0]!.last_valid_height! - sol.slot() + 1); // the blockhash can no longer land
    await b.process('t:expiry');
    row = (await store.get<ChainTxDoc>(CHAIN_TXS, 't:expiry'))!;
    expect(row.attempts).toHaveLength(2);
    expect(row.attempts[1]!.blockhash).not.toBe(row.attempts[0]!.blockhash);
    await sol.airdrop(signer.address(sender), 1_500_000n);
    const final = await settle(b, 't:expiry');
    expect(final).toMatchObject({ status: 'confirmed', tx_hash: row.attempts[1]!.hash });
    expect(sol.balance(to)).toBe(1_500_000n);
    expect(sol.getLoggedTransaction(row.attempts[0]!.hash)).toBeUndefined();
  });
});
