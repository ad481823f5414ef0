/**
 * Both test chains (Hardhat node with TestUSDC, LiteSVM with an SPL mint), a SQLite store in a temp dir,
 * a config pointing at them (1 confirmation on Ethereum) and a pool signer over `phrase`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config/index.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { PoolSigner } from '../../lib/chains/signer.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness, type MintInfo } from '../harness/solana-rpc.ts';
import { tempDir } from './node.ts';

export interface ChainEnv {
  eth: HardhatNode;
  usdc: TestUsdc;
  sol: SolanaRpcHarness;
  mint: MintInfo;
  store: Store;
  dir: string;
  signer: PoolSigner;
  config: ReturnType<typeof loadConfig>;
  /** stops everything and removes the dir */
  close(): Promise<void>;
}

export async function startChainEnv(phrase: string): Promise<ChainEnv> {
  const env: Partial<ChainEnv> = {};
  const close = async () => {
    await env.signer?.close();
    await env.store?.close();
    await closeClients();
    await Promise.all([env.eth?.stop(), env.sol?.stop()]);
    if (env.dir) rmSync(env.dir, { recursive: true, force: true });
  };
  try {
    [env.eth, env.sol] = await Promise.all([startHardhatNode(), startSolanaRpc()]);
    env.usdc = await env.eth.deployTestUsdc();
    env.mint = await env.sol.createMint();
    env.dir = tempDir();
    env.store = await openStore(`sqlite:${join(env.dir, 's.db')}`);
    env.config = loadConfig({
      DATA_DIR: env.dir,
      ETHEREUM_TESTNET_RPC_URL: env.eth.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: env.usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      SOLANA_TESTNET_RPC_URL: env.sol.url,
      SOLANA_TESTNET_USDC_MINT: env.mint.mint,
    });
    env.signer = new PoolSigner(phrase);
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
  return { ...(env as Omit<ChainEnv, 'close'>), close };
}
