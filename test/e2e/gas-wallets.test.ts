/**
 * Platform gas wallets on real chains (Hardhat node, LiteSVM harness): `npm run operator -- gas-wallets`
 * prints one line per chain and network; an unfunded one is flagged, logged and counted in a metric.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { startHardhatNode, type HardhatNode } from '../harness/hardhat-node.ts';
import { startSolanaRpc, type SolanaRpcHarness } from '../harness/solana-rpc.ts';
import { KeyDeriver } from '../../lib/chains/keys.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';

const run = promisify(execFile);

describe('gas wallets', () => {
  let eth: HardhatNode;
  let sol: SolanaRpcHarness;
  let t: TestNode;
  let env: NodeJS.ProcessEnv;
  let keys: KeyDeriver;
  let ethGas: string;
  let solGas: string;

  beforeAll(async () => {
    [eth, sol] = await Promise.all([startHardhatNode(), startSolanaRpc()]);
    const chainEnv = {
      ETHEREUM_TESTNET_RPC_URL: eth.url,
      SOLANA_TESTNET_RPC_URL: sol.url,
      GAS_WALLET_MIN_ETH: '0.5',
      GAS_WALLET_MIN_SOL: '1',
    };
    t = await startTestNode({ ...chainEnv, SERVICES: 'api,treasury,operators,merchant-actors' });
    env = { ...process.env, ...chainEnv, DATA_DIR: t.dataDir, LOG_LEVEL: 'error' };
    // the node's seed: created in its data dir on first start
    keys = new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase);
    ethGas = keys.address(gasWalletRef('ethereum', 'testnet'));
    solGas = keys.address(gasWalletRef('solana', 'testnet'));
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await Promise.all([eth?.stop(), sol?.stop()]);
  });

  it('prints `<chain> <network> <address> <balance>` per chain and network, flagging a low one', async () => {
    await eth.setBalance(ethGas, 1_250_000_000_000_000_000n);
    await sol.airdrop(solGas, 300_000_000n);
    const { stdout, stderr } = await run(process.execPath, ['scripts/operator.ts', 'gas-wallets'], { env });
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([`ethereum testnet ${ethGas} 1.25`, `solana testnet ${solGas} 0.3`]);
    expect(stderr).toContain(`warning: solana testnet gas wallet is low: 0.3 SOL, below the minimum 1 SOL; fund ${solGas}`);
    expect(stderr).not.toContain('ethereum testnet gas wallet is low');
    // never a session address or a merchant wallet address
    expect(ethGas).not.toBe(keys.address({ role: 'deposit', chain: 'ethereum', index: 0 }));
    expect(solGas).not.toBe(keys.address({ role: 'wallet', chain: 'solana', index: 0 }));
  });

  it('counts a low balance in a metric on the node that checked it', async () => {
    const list = await t.call('treasury.gasWallets');
    expect(list.map((w: { low: boolean }) => w.low)).toEqual([false, true]);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/gas_wallet_low_total\{chain="solana",network="testnet"\} [1-9]/);
    expect(metrics).toMatch(/gas_wallet_balance\{chain="ethereum",network="testnet"\} 1\.25/);
  });
});
