/**
 * Quotes the network cost of a merchant-paid movement (payouts, refunds) before it is accepted, from
 * the chain as it is now (./fee-policy.ts says who pays and how the quote is charged):
 * - Ethereum: gas limit × gas price with the signing margin; the transaction is later pinned to both,
 *   so its fee cannot exceed the quote unless a stuck transaction is replaced at a higher price;
 * - Solana: one signature (the wallet is its own fee payer) and, for SPL, the rent of the destination's
 *   token account when it does not exist yet.
 */
import { Interface, getAddress } from 'ethers';
import { PublicKey } from '@solana/web3.js';
import type { Config } from '../../config/index.ts';
import { unavailable } from '../core/errors.ts';
import { associatedTokenAddress, ethProvider, rpcErrorText, solConnection } from '../chains/clients.ts';
import { NATIVE_TRANSFER_GAS, marginGasPrice } from '../chains/ethereum/tx-driver.ts';
import { ERC20_TRANSFER_GAS, TOKEN_ACCOUNT_SIZE, ethereumQuote, solanaQuote, type FeeQuote } from './fee-policy.ts';

const ERC20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)']);

export interface QuoteInput {
  chain: 'ethereum' | 'solana';
  network: string;
  token: string;
  /** the paying wallet's address */
  from: string;
  destination: string;
  amount: bigint;
}

export type QuoteFee = (i: QuoteInput) => Promise<FeeQuote>;

export function feeQuoter(config: Pick<Config, 'chains'>): QuoteFee {
  return async (i) => {
    const cfg = config.chains[i.chain][i.network as 'testnet' | 'mainnet'];
    if (!cfg?.rpcUrl)
      throw unavailable(`the network fee cannot be quoted: no RPC is configured for ${i.chain} ${i.network}`, { retryable: false });
    try {
      return i.chain === 'ethereum' ? await ethereum(cfg.rpcUrl, cfg.usdcToken, i) : await solana(cfg.rpcUrl, cfg.usdcToken, i);
    } catch (e) {
      throw unavailable(`the network fee cannot be quoted now: ${rpcErrorText(e, 200)}`, { retryable: true });
    }
  };
}

async function ethereum(rpcUrl: string, usdc: string, i: QuoteInput): Promise<FeeQuote> {
  const p = await ethProvider(rpcUrl);
  const gasPrice = await marginGasPrice(p);
  let gasLimit: bigint;
  if (i.token === 'ETH') {
    const code = await p.getCode(getAddress(i.destination));
    gasLimit = code === '0x' ? NATIVE_TRANSFER_GAS : ((await p.estimateGas({ from: i.from, to: i.destination, value: 1n })) * 130n) / 100n;
  } else {
    const data = ERC20.encodeFunctionData('transfer', [getAddress(i.destination), i.amount]);
    // the tokens may not be at the address yet (a custody move on its way): then the usual transfer's gas
    gasLimit = await p.estimateGas({ from: i.from, to: getAddress(usdc), data }).then(
      (g) => (g * 130n) / 100n,
      () => ERC20_TRANSFER_GAS,
    );
  }
  return ethereumQuote(gasLimit, gasPrice);
}

async function solana(rpcUrl: string, mint: string, i: QuoteInput): Promise<FeeQuote> {
  if (i.token === 'SOL') return solanaQuote(1, 0n);
  const conn = solConnection(rpcUrl);
  const ata = new PublicKey(associatedTokenAddress(i.destination, mint));
  const exists = (await conn.getAccountInfo(ata, 'confirmed')) !== null;
  return solanaQuote(1, exists ? 0n : BigInt(await conn.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE)));
}
