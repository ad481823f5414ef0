/**
 * A started node on one test chain with its gas wallet funded by the operator, as the money-path tests
 * (issue 18) use it: Hardhat with TestUSDC (1,000 USDC minted to account 1 for paying sessions), or the
 * LiteSVM harness with an SPL mint; fast chain, broadcast and session scans.
 */
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness, type MintInfo } from '../harness/solana-rpc.ts';
import { startTestNode, type TestNode } from './node.ts';
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';
import { KeyDeriver } from '../../lib/chains/keys.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';

const FAST = { CHAIN_POLL_INTERVAL_MS: '100', BROADCAST_POLL_INTERVAL_MS: '100', SESSION_SCAN_INTERVAL_MS: '100' };

const gasAddress = (t: TestNode, chain: 'ethereum' | 'solana') =>
  new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase).address(gasWalletRef(chain, 'testnet'));

export async function startEthereumMoneyNode(env: Record<string, string> = {}) {
  const eth: HardhatNode = await startHardhatNode();
  const usdc: TestUsdc = await eth.deployTestUsdc();
  await usdc.mint(eth.accounts[1]!.address, 1_000_000_000n);
  const t: TestNode = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: eth.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    ...FAST,
    ...env,
  });
  const gasWallet = gasAddress(t, 'ethereum');
  await eth.setBalance(gasWallet, 10n ** 19n);
  return { eth, usdc, t, gasWallet, stop: async () => (await t.stop(), await eth.stop()) };
}

export async function startSolanaMoneyNode(env: Record<string, string> = {}) {
  const sol: SolanaRpcHarness = await startSolanaRpc();
  const mint: MintInfo = await sol.createMint();
  const t: TestNode = await startTestNode({ SOLANA_TESTNET_RPC_URL: sol.url, SOLANA_TESTNET_USDC_MINT: mint.mint, ...FAST, ...env });
  const gasWallet = gasAddress(t, 'solana');
  await sol.airdrop(gasWallet, 10_000_000_000n);
  return { sol, mint, t, gasWallet, stop: async () => (await t.stop(), await sol.stop()) };
}
