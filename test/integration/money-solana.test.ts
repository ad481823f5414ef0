/**
 * Settlement of Solana deposits (LiteSVM RPC harness, real transactions): SOL and SPL USDC payments to
 * session addresses credit the merchant's default Solana wallet (a base58 address of its own) pending,
 * once per deposit, with the paying signature on the wallet transaction.
 */
import { startSolanaRpc, type MintInfo, type SolanaRpcHarness } from '../harness/solana-rpc.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { RAILS, createSession, sessionWhen, until } from './chain-listener-helpers.ts';

jest.setTimeout(180_000);

describe('settlement of Solana deposits (LiteSVM)', () => {
  let sol: SolanaRpcHarness;
  let usdc: MintInfo;
  let payer: Awaited<ReturnType<SolanaRpcHarness['newWallet']>>;
  let t: TestNode;
  let m: RegisteredMerchant;

  beforeAll(async () => {
    sol = await startSolanaRpc({ confirmedLag: 0, finalizedLag: 0 });
    usdc = await sol.createMint({ decimals: 6 });
    payer = await sol.newWallet(5_000_000_000n);
    await sol.mintTo(usdc.mint, payer.address, 1_000_000_000n);
    t = await startTestNode({
      SOLANA_TESTNET_RPC_URL: sol.url,
      SOLANA_TESTNET_USDC_MINT: usdc.mint,
      SOLANA_TESTNET_COMMITMENT: 'confirmed',
      CHAIN_POLL_INTERVAL_MS: '100',
    });
    m = await merchant(t);
  });

  afterAll(async () => {
    await t?.stop();
    await sol?.stop();
  });

  it("SOL and USDC payments settle pending into the merchant's default Solana wallet, once each", async () => {
    const a = await createSession(t, m, RAILS.sol, 0.5);
    const b = await createSession(t, m, RAILS.solUsdc, 3);
    const sigA = await sol.transferSol(payer, a.address, 500_000_000n);
    const sigB = await sol.transferToken(payer, b.address, usdc.mint, 3_000_000n);
    await sessionWhen(t, m, a.session_id, 'SOL completion', (x) => x.status === 'completed');
    await sessionWhen(t, m, b.session_id, 'USDC completion', (x) => x.status === 'completed');

    const wallet = await until('the Solana wallet with both credits', async () => {
      const list = (await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data as any[];
      const w = list.find((x) => x.chain === 'solana' && x.is_default);
      const settled = (token: string) => w?.balances.find((x: any) => x.token === token);
      return w && settled('SOL').pending_subunits !== '0' && settled('USDC').pending_subunits !== '0' && w;
    });
    expect(wallet.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(wallet.address).not.toBe(a.address);
    const by = (token: string) => wallet.balances.find((x: any) => x.token === token);
    expect(by('SOL')).toMatchObject({ available: 0, pending: 0.5, pending_subunits: '500000000' });
    expect(by('USDC')).toMatchObject({ available: 0, pending: 3, pending_subunits: '3000000' });
    const txs = (await t.request('GET', `/v1/wallets/${wallet.id}/transactions`, { key: m.apiKey })).body.data as any[];
    expect(txs.map((x) => [x.type, x.status, x.token, x.amount_subunits, x.tx_hash, x.session_id]).sort()).toEqual(
      [
        ['settlement', 'pending', 'SOL', '500000000', sigA, a.session_id],
        ['settlement', 'pending', 'USDC', '3000000', sigB, b.session_id],
      ].sort(),
    );
    expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
  });
});
