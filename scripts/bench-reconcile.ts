/**
 * `npm run bench:reconcile`: what a deep reconciliation costs over N movements.
 *
 * A node (SQLite, in this process) on a local Hardhat chain and the LiteSVM harness; one merchant's
 * sessions paid on chain and swept, then N ETH payouts and N SOL payouts to fresh addresses, all final.
 * Then, per network:
 * - the first `reconcile --deep` (every row read from the chain once, every address compared at a stated
 *   height): RPC calls, HTTP requests, time;
 * - a second one with nothing new (the cursors: only the balances are read again);
 * - the bare baseline in the same run: reading the same transactions with no checks at all (Ethereum the
 *   transaction and its receipt, Solana one getTransaction), through the same counted JSON-RPC client.
 *
 * Environment: BENCH_N (payouts per chain, default 50).
 */
import { Keypair } from '@solana/web3.js';
import { Wallet } from 'ethers';
import { startTestNode } from '../test/helpers/node.ts';
import { merchant } from '../test/integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../test/integration/chain-listener-helpers.ts';
import { startHardhatNode } from '../test/harness/hardhat-node.ts';
import { startSolanaRpc } from '../test/harness/solana-rpc.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { KeyDeriver } from '../lib/chains/keys.ts';
import { gasWalletRef } from '../lib/treasury/gas-wallet.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../lib/chains/broadcast/types.ts';
import { JsonRpc } from '../lib/treasury/reconcile/rpc.ts';
import type { ReconcileReport } from '../lib/treasury/reconcile/run.ts';

const N = Number(process.env.BENCH_N ?? 50);

const [eth, sol] = await Promise.all([startHardhatNode(), startSolanaRpc()]);
const usdc = await eth.deployTestUsdc();
const mint = await sol.createMint();
const t = await startTestNode({
  ETHEREUM_TESTNET_RPC_URL: eth.url,
  ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
  ETHEREUM_TESTNET_CONFIRMATIONS: '1',
  SOLANA_TESTNET_RPC_URL: sol.url,
  SOLANA_TESTNET_USDC_MINT: mint.mint,
  CHAIN_POLL_INTERVAL_MS: '100',
  BROADCAST_POLL_INTERVAL_MS: '100',
  SESSION_SCAN_INTERVAL_MS: '100',
  LOG_LEVEL: 'error',
});
try {
  const keys = new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase);
  await eth.setBalance(keys.address(gasWalletRef('ethereum', 'testnet')), 10n ** 19n);
  await sol.airdrop(keys.address(gasWalletRef('solana', 'testnet')), 100_000_000_000n);
  const m = await merchant(t);
  const payer = await sol.newWallet(100_000_000_000n);
  const get = async (path: string) => (await t.request('GET', path, { key: m.apiKey })).body;
  const wallet = async (chain: string, token: string, atLeast: bigint) =>
    until(
      `${token} available`,
      async () => {
        const w = (await get('/v1/wallets?limit=100')).data.find((x: any) => x.chain === chain && x.type === 'merchant');
        const b = w?.balances.find((x: any) => x.token === token);
        return b && BigInt(b.available_subunits) >= atLeast ? w : null;
      },
      180_000,
    );
  const se = await createSession(t, m, RAILS.eth, 1);
  await eth.sendEth(1, se.address, 10n ** 18n);
  const ss = await createSession(t, m, RAILS.sol, 50);
  await sol.transferSol(payer, ss.address, 50_000_000_000n);
  await sessionWhen(t, m, se.session_id, 'ETH paid', (x) => x.status === 'completed', 120_000);
  await sessionWhen(t, m, ss.session_id, 'SOL paid', (x) => x.status === 'completed', 120_000);
  const ew = await wallet('ethereum', 'ETH', 9n * 10n ** 17n);
  const sw = await wallet('solana', 'SOL', 49n * 10n ** 9n);
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    for (const body of [
      { wallet_id: ew.id, token: 'ETH', amount_subunits: String(10n ** 15n + BigInt(i)), destination: Wallet.createRandom().address },
      {
        wallet_id: sw.id,
        token: 'SOL',
        amount_subunits: String(10n ** 8n + BigInt(i)),
        destination: Keypair.generate().publicKey.toBase58(),
      },
    ]) {
      const r = await t.request('POST', '/v1/payouts', { key: m.apiKey, body });
      if (r.status !== 201) throw new Error(`payout: ${r.status} ${r.text}`);
      ids.push(r.body.id);
    }
  }
  await until(
    'every payout final',
    async () => {
      await t.call('money-out.scan');
      const s = await t.call<{ transactions: Record<string, number> }>('money-out.status');
      return (
        s.transactions.signed + s.transactions.sent === 0 &&
        (await t.node.rt.store.count('payouts', { status: { $in: ['pending', 'processing'] } })) === 0
      );
    },
    600_000,
  );

  const deep = () => t.call<ReconcileReport>('treasury.reconcile', { deep: true });
  const first = await deep();
  const second = await deep();
  const rows = await t.node.rt.store.find<ChainTxDoc>(CHAIN_TXS, { status: 'confirmed' });
  console.log(`reconcile --deep over ${N} ETH and ${N} SOL payouts (plus their sessions' sweeps), ${first.drifts.length} drifts`);
  for (const chain of ['ethereum', 'solana'] as const) {
    const a = first.networks.find((n) => n.chain === chain)!;
    const b = second.networks.find((n) => n.chain === chain)!;
    const mine = rows.filter((r) => r.chain === chain);
    const rpc = new JsonRpc(chain === 'ethereum' ? eth.url : sol.url);
    const started = Date.now();
    await Promise.all(
      mine.map((r) =>
        chain === 'ethereum'
          ? Promise.all([rpc.call('eth_getTransactionByHash', [r.tx_hash]), rpc.call('eth_getTransactionReceipt', [r.tx_hash])])
          : rpc.call('getTransaction', [r.tx_hash, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }]),
      ),
    );
    const bare = Date.now() - started;
    console.log(
      `${chain}: first deep run ${a.rows_checked} rows, ${a.movements_checked} movements, ${a.addresses_checked} balances at ${a.height_kind} ${a.height}: ` +
        `${a.rpc_calls} RPC calls in ${a.rpc_requests} requests, ${a.ms} ms; second (nothing new): ${b.rpc_calls} calls, ${b.ms} ms; ` +
        `bare reads of the same ${mine.length} transactions: ${rpc.calls} calls, ${bare} ms (first run ${(a.ms / Math.max(1, bare)).toFixed(1)} ×)`,
    );
  }
} finally {
  await t.stop();
  await Promise.all([eth.stop(), sol.stop()]);
}
