/**
 * `npm run local-chain`: a local Ethereum chain to try x402 clients against (docs/agents-and-x402.md).
 * Hardhat's node on 127.0.0.1:8545 (LOCAL_CHAIN_PORT) with an EIP-3009 token whose EIP-712 domain is
 * USDC's ("USD Coin", version "2") deployed at a fixed address, and a buyer (Hardhat's account #1, whose
 * well-known development key it prints) holding 100 of it. Prints the service settings that use it and
 * runs until stopped.
 *
 * `npm run local-chain -- fund <address>` gives an address of that running chain 10 ETH (the service's
 * gas wallet pays the gas of x402 settlements: `npm run operator -- gas-wallets` names it).
 */
import { JsonRpcProvider, parseEther, toQuantity } from 'ethers';
import { startHardhatNode } from '../test/harness/hardhat-node.ts';

const port = Number(process.env.LOCAL_CHAIN_PORT ?? 8545);
const url = `http://127.0.0.1:${port}`;

async function fund(address: string): Promise<void> {
  const p = new JsonRpcProvider(url, undefined, { staticNetwork: true });
  await p.send('hardhat_setBalance', [address, toQuantity(parseEther('10'))]);
  console.log(`${address} holds 10 ETH on ${url}`);
  p.destroy();
}

async function serve(): Promise<void> {
  const chain = await startHardhatNode({ port });
  const usdc = await chain.deployTestUsdc(0, { name: 'USD Coin' });
  const buyer = chain.accounts[1];
  await usdc.mint(buyer.address, 100_000_000n);
  console.log(`local chain ${chain.url} (chain id ${chain.chainId})`);
  console.log(`USDC-like EIP-3009 token ${usdc.address} ("USD Coin", version "2")`);
  console.log(`buyer ${buyer.address} holds 100 USDC; buyer key ${buyer.privateKey} (a public development key)`);
  console.log('service settings:');
  console.log(`ETHEREUM_TESTNET_RPC_URL=${chain.url} ETHEREUM_TESTNET_USDC_ADDRESS=${usdc.address} ETHEREUM_TESTNET_CONFIRMATIONS=1`);
  const stop = () => void chain.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[2] === 'fund') await fund(process.argv[3] ?? '');
else await serve();
