/**
 * Testnet faucets through HTTP: the list per enabled rail (public faucets, or the local drip on a loopback
 * chain), and drips on a real Hardhat node from the development gas wallet through the transaction outbox,
 * with their refusals and limits.
 */
import { Wallet } from 'ethers';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, liveMerchant } from './sessions-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { DEFAULT_FAUCETS } from '../../config/faucets.ts';

describe('testnet faucets', () => {
  it('lists the public faucets of the enabled testnet rails by default', async () => {
    const t = await startTestNode();
    try {
      const res = await t.request('GET', '/v1/sandbox/faucets');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(DEFAULT_FAUCETS.map((f) => ({ ...f, local: false })));
      expect(res.body.data.map((f: { chain: string; token: string }) => `${f.chain}:${f.token}`)).toEqual([
        'ethereum:ETH',
        'ethereum:USDC',
        'solana:USDC',
        'solana:SOL',
      ]);
    } finally {
      await t.stop();
    }
  });

  it('never lists a faucet of a rail that is not enabled (configured list)', async () => {
    const faucets = [
      {
        chain: 'ethereum',
        network: 'testnet',
        token: 'USDC',
        name: 'Mine',
        url: 'https://faucet.example/usdc',
        amount: '5 USDC',
        interval: '1h',
        notes: 'n',
      },
      { chain: 'ethereum', network: 'mainnet', token: 'ETH', name: 'No such thing', url: 'https://x.example' },
      { chain: 'polygon', network: 'testnet', token: 'USDC', name: 'Not enabled', url: 'https://y.example' },
      { chain: 'solana', network: 'testnet', token: 'DOGE', name: 'Not a rail', url: 'https://z.example' },
    ];
    const t = await startTestNode({ FAUCETS: JSON.stringify(faucets) });
    try {
      const res = await t.request('GET', '/v1/sandbox/faucets');
      expect(res.body.data).toEqual([{ ...faucets[0], local: false }]);
    } finally {
      await t.stop();
    }
  });

  it('a local chain that does not answer is a 503 that says so, never a 500 or the RPC URL', async () => {
    const t = await startTestNode({ ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:9', CHAIN_POLL_INTERVAL_MS: '60000' });
    try {
      const m = await merchant(t);
      const res = await t.request('POST', '/v1/sandbox/faucets/drip', {
        key: m.apiKey,
        body: { address: Wallet.createRandom().address, chain: 'ethereum', token: 'ETH' },
      });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 1, message: expect.stringMatching(/local ethereum testnet node does not answer/) });
      expect(res.text).not.toContain('127.0.0.1:9');
    } finally {
      await t.stop();
    }
  });

  describe('on a local development chain', () => {
    let chain: HardhatNode;
    let usdc: TestUsdc;
    let t: TestNode;
    let sandbox: RegisteredMerchant;
    let gasWallet: string;

    beforeAll(async () => {
      chain = await startHardhatNode();
      usdc = await chain.deployTestUsdc();
      t = await startTestNode({
        ETHEREUM_TESTNET_RPC_URL: chain.url,
        ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
        ETHEREUM_TESTNET_CONFIRMATIONS: '1',
        FAUCET_DRIP_AMOUNTS: 'ETH=0.5,USDC=25.5',
        FAUCET_DRIP_PER_MERCHANT: '4',
        CHAIN_POLL_INTERVAL_MS: '60000',
      });
      sandbox = await merchant(t);
      const wallets = await t.call<Array<{ chain: string; network: string; address: string }>>('treasury.gasWallets');
      gasWallet = wallets.find((w) => w.chain === 'ethereum' && w.network === 'testnet')!.address;
    });
    afterAll(async () => {
      await t?.stop();
      await chain?.stop();
    });

    const drip = (body: unknown, key = sandbox.apiKey) => t.request('POST', '/v1/sandbox/faucets/drip', { key, body });
    const fresh = () => Wallet.createRandom().address;

    it('offers the local drip instead of the public Sepolia faucets', async () => {
      const res = await t.request('GET', '/v1/sandbox/faucets');
      expect(res.body.data.map((f: { chain: string; token: string; local: boolean }) => `${f.chain}:${f.token}:${f.local}`)).toEqual([
        'solana:USDC:false',
        'solana:SOL:false',
        'ethereum:USDC:true',
        'ethereum:ETH:true',
      ]);
      expect(res.body.data.find((f: { token: string; local: boolean }) => f.local && f.token === 'USDC')).toMatchObject({
        network: 'testnet',
        name: 'Local development faucet',
        url: `${t.node.rt.config.publicUrl}/v1/sandbox/faucets/drip`,
        amount: '25.5 USDC',
      });
    });

    it('says which wallet to fund while the gas wallet is empty, and counts nothing', async () => {
      const to = fresh();
      const res = await drip({ address: to, chain: 'ethereum', token: 'ETH' });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        code: 1,
        message: expect.stringContaining(`the development gas wallet ${gasWallet} on ethereum testnet holds 0 ETH`),
      });
      expect(await chain.provider.getBalance(to)).toBe(0n);
    });

    it('sends ETH and USDC from the development gas wallet, persisted in the outbox', async () => {
      await chain.setBalance(gasWallet, 10n * 10n ** 18n);
      await usdc.mint(gasWallet, 1_000_000_000n);
      const to = fresh();
      const eth = await drip({ address: to.toLowerCase(), chain: 'ethereum', token: 'eth' });
      expect(eth.status).toBe(200);
      expect(eth.body).toMatchObject({
        id: expect.stringMatching(/^drp_/),
        chain: 'ethereum',
        network: 'testnet',
        token: 'ETH',
        address: to,
        from_address: gasWallet,
        amount: '0.5',
        amount_subunits: '500000000000000000',
        tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        status: 'confirmed',
      });
      expect(await chain.provider.getBalance(to)).toBe(5n * 10n ** 17n);
      const row = await t.node.rt.store.get<{ id: string; purpose: string; status: string; tx_hash: string; ref: string }>(
        'chain_txs',
        `faucet:${eth.body.id}`,
      );
      expect(row).toMatchObject({ purpose: 'faucet', status: 'confirmed', tx_hash: eth.body.tx_hash, ref: eth.body.id });

      const tok = await drip({ address: to, chain: 'ethereum', token: 'USDC' });
      expect(tok.status).toBe(200);
      expect(tok.body).toMatchObject({ token: 'USDC', amount: '25.5', amount_subunits: '25500000', status: 'confirmed' });
      expect(await usdc.balanceOf(to)).toBe(25_500_000n);

      // once per address, chain and token in the window
      const again = await drip({ address: to, chain: 'ethereum', token: 'ETH' });
      expect(again.status).toBe(429);
      expect(again.body).toMatchObject({ code: 4, message: expect.stringMatching(/already received ETH on ethereum/) });
      expect(await chain.provider.getBalance(to)).toBe(5n * 10n ** 17n);
    });

    it('limits drips per merchant', async () => {
      const other = await merchant(t);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await drip({ address: fresh(), chain: 'ethereum', token: 'ETH' }, other.apiKey)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    });

    it('refuses other chains, live keys, bad input and missing credentials', async () => {
      const sol = await drip({ address: '11111111111111111111111111111111', chain: 'solana', token: 'SOL' });
      expect(sol.status).toBe(400);
      expect(sol.body.message).toMatch(/only on a local development chain, and solana testnet is not one/);
      expect((await drip({ address: fresh(), chain: 'ethereum', token: 'DOGE' })).body.message).toMatch(/no enabled testnet rail/);
      expect((await drip({ address: '0x1234', chain: 'ethereum', token: 'ETH' })).body).toMatchObject({
        code: 3,
        message: 'address is not a valid ethereum address',
      });
      const extra = await drip({ address: fresh(), chain: 'ethereum', token: 'ETH', amount: 1000 });
      expect(extra.status).toBe(400);
      expect(extra.body.message).toMatch(/unknown field 'amount'/);
      expect((await drip({ address: fresh(), chain: 'bitcoin', token: 'BTC' })).status).toBe(400);
      const anon = await t.request('POST', '/v1/sandbox/faucets/drip', { body: { address: fresh(), chain: 'ethereum', token: 'ETH' } });
      expect(anon.status).toBe(401);
      const live = await liveMerchant(t);
      const refused = await drip({ address: fresh(), chain: 'ethereum', token: 'ETH' }, live.apiKey);
      expect(refused.status).toBe(403);
      expect(refused.body.message).toMatch(/sandbox merchants/);
    });
  });
});
