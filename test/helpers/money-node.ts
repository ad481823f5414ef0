/**
 * A started node on the test chains with its gas wallets funded by the operator, as the money-path tests
 * (issue 18) use it: Hardhat with TestUSDC (1,000 USDC minted to account 1 for paying sessions), the
 * LiteSVM harness with an SPL mint, or both (`startMoneyNode`); fast chain, broadcast and session scans.
 * `stop` stops the node, the process's chain clients and the chains.
 */
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness, type MintInfo } from '../harness/solana-rpc.ts';
import { startTestNode, type TestNode } from './node.ts';
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';
import { KeyDeriver } from '../../lib/chains/keys.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import { RAILS, createSession, until } from '../integration/chain-listener-helpers.ts';
import type { RegisteredMerchant } from './merchant.ts';
import { getOk } from './merchant-money.ts';

const FAST = { CHAIN_POLL_INTERVAL_MS: '100', BROADCAST_POLL_INTERVAL_MS: '100', SESSION_SCAN_INTERVAL_MS: '100' };

export interface MoneyNodeOptions {
  /** USDC subunits minted to Hardhat account 1, the payer of sessions (default 1,000 USDC) */
  payerUsdc?: bigint;
  /** the Ethereum gas wallet's funding in wei (default 10 ETH) */
  gasWei?: bigint;
  /** the Solana gas wallet's funding in lamports (default 10 SOL) */
  gasLamports?: bigint;
}

const gasAddress = (t: TestNode, chain: 'ethereum' | 'solana') =>
  new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase).address(gasWalletRef(chain, 'testnet'));

async function ethereumChain(o: MoneyNodeOptions) {
  const eth: HardhatNode = await startHardhatNode();
  const usdc: TestUsdc = await eth.deployTestUsdc();
  await usdc.mint(eth.accounts[1]!.address, o.payerUsdc ?? 1_000_000_000n);
  const env = { ETHEREUM_TESTNET_RPC_URL: eth.url, ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address, ETHEREUM_TESTNET_CONFIRMATIONS: '1' };
  return { eth, usdc, env };
}

async function solanaChain() {
  const sol: SolanaRpcHarness = await startSolanaRpc();
  const mint: MintInfo = await sol.createMint();
  return { sol, mint, env: { SOLANA_TESTNET_RPC_URL: sol.url, SOLANA_TESTNET_USDC_MINT: mint.mint } };
}

/** the node on the chains' env (plus FAST and `extra`); the chains stop when it does not start */
async function startOn(chainEnv: Record<string, string>, extra: Record<string, string>, stopChains: () => Promise<unknown>) {
  const env = { ...chainEnv, ...FAST, ...extra };
  try {
    return { t: await startTestNode(env), env };
  } catch (e) {
    await stopChains().catch(() => undefined);
    throw e;
  }
}

export async function startEthereumMoneyNode(extra: Record<string, string> = {}, o: MoneyNodeOptions = {}) {
  const { eth, usdc, env: chainEnv } = await ethereumChain(o);
  const { t, env } = await startOn(chainEnv, extra, () => eth.stop());
  const gasWallet = gasAddress(t, 'ethereum');
  await eth.setBalance(gasWallet, o.gasWei ?? 10n ** 19n);
  return { eth, usdc, t, env, gasWallet, stop: async () => (await t.stop(), await closeClients(), await eth.stop()) };
}

export async function startSolanaMoneyNode(extra: Record<string, string> = {}, o: MoneyNodeOptions = {}) {
  const { sol, mint, env: chainEnv } = await solanaChain();
  const { t, env } = await startOn(chainEnv, extra, () => sol.stop());
  const gasWallet = gasAddress(t, 'solana');
  await sol.airdrop(gasWallet, o.gasLamports ?? 10_000_000_000n);
  return { sol, mint, t, env, gasWallet, stop: async () => (await t.stop(), await closeClients(), await sol.stop()) };
}

/** Both chains, one node on both. `env` is the node's environment (for an operator CLI run beside it). */
export async function startMoneyNode(extra: Record<string, string> = {}, o: MoneyNodeOptions = {}) {
  const [e, s] = await Promise.allSettled([ethereumChain(o), solanaChain()]);
  if (e.status === 'rejected' || s.status === 'rejected') {
    await Promise.all([e.status === 'fulfilled' && e.value.eth.stop(), s.status === 'fulfilled' && s.value.sol.stop()]);
    throw e.status === 'rejected' ? e.reason : (s as PromiseRejectedResult).reason;
  }
  const { eth, usdc } = e.value;
  const { sol, mint } = s.value;
  const stopChains = () => Promise.all([eth.stop(), sol.stop()]);
  const { t, env } = await startOn({ ...e.value.env, ...s.value.env }, extra, stopChains);
  const gasWallets = { ethereum: gasAddress(t, 'ethereum'), solana: gasAddress(t, 'solana') };
  await eth.setBalance(gasWallets.ethereum, o.gasWei ?? 10n ** 19n);
  await sol.airdrop(gasWallets.solana, o.gasLamports ?? 10_000_000_000n);
  return { eth, usdc, sol, mint, t, env, gasWallets, stop: async () => (await t.stop(), await closeClients(), await stopChains()) };
}

/**
 * The Solana default wallet of merchant `m` funded on chain: two sessions (`usdc` USDC and `sol` SOL, in
 * whole units as a session takes them) paid from a new payer, waited for until both amounts are available
 * (swept into the wallet).
 */
export async function fundSolanaWallet(
  t: TestNode,
  sol: SolanaRpcHarness,
  mint: MintInfo,
  m: RegisteredMerchant,
  amounts: { usdc: number; sol: number },
) {
  const usdcSubunits = BigInt(Math.round(amounts.usdc * 1e6));
  const lamports = BigInt(Math.round(amounts.sol * 1e9));
  const payer = await sol.newWallet(3_000_000_000n);
  await sol.mintTo(mint.mint, payer.address, 100_000_000n);
  const su = await createSession(t, m, RAILS.solUsdc, amounts.usdc);
  await sol.transferToken(payer, su.address, mint.mint, usdcSubunits);
  const ss = await createSession(t, m, RAILS.sol, amounts.sol);
  await sol.transferSol(payer, ss.address, lamports);
  return until(
    'both Solana settlements to become available',
    async () => {
      const x = (await getOk(t, m, '/v1/wallets?limit=100')).data.find((y: any) => y.chain === 'solana' && y.is_default);
      const available = (token: string) => x?.balances.find((b: any) => b.token === token)?.available_subunits;
      return x && available('USDC') === usdcSubunits.toString() && available('SOL') === lamports.toString() ? x : null;
    },
    90_000,
  );
}
