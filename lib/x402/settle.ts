/**
 * Settling x402 proofs on chain with the platform gas wallet: EIP-3009 `transferWithAuthorization`
 * submitted by the gas wallet (it pays the gas), and Solana payment transactions co-signed by the gas
 * wallet as fee payer. `prepare` signs without sending, so the caller persists the signed bytes and hash
 * before the first send; `send` re-sends the same bytes (never re-signed); `status` reads the outcome.
 * No broker and no store here.
 */
import { Interface, getAddress, encodeBase58, type JsonRpcProvider } from 'ethers';
import { VersionedTransaction } from '@solana/web3.js';
import { ethProvider, solConnection } from '../chains/clients.ts';
import { gasWalletRef } from '../chains/gas-wallet.ts';
import type { Signer } from '../chains/signer.ts';
import { splitSignature, type Eip3009Authorization } from './proof.ts';

export const EIP3009_ABI = [
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
];
const iface = new Interface(EIP3009_ABI);

export type SettleStatus = 'confirmed' | 'failed' | 'unknown';
export interface Prepared { raw: string; hash: string }

export interface ChainEndpoints {
  rpcUrl: string;
  /** Ethereum: blocks on top of the inclusion block (1 = included); Solana: commitment */
  confirmations: number;
  commitment: 'processed' | 'confirmed' | 'finalized';
}

/** One nonce sequence per gas wallet and process: settlements are signed one after another. */
const nonceLocks = new Map<string, Promise<unknown>>();
const nextNonce = new Map<string, number>();

async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = nonceLocks.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  nonceLocks.set(key, run.catch(() => undefined));
  return run;
}

const domainSeparators = new Map<string, string>();

export class X402Settler {
  private signer: Signer;

  constructor(signer: Signer) {
    this.signer = signer;
  }

  gasWallet(chain: 'ethereum' | 'solana', network: string): string {
    return this.signer.address(gasWalletRef(chain, network));
  }

  /** The token's EIP-712 domain separator, read from the contract once. */
  async domainSeparator(ep: ChainEndpoints, token: string): Promise<string> {
    const key = `${ep.rpcUrl}|${token.toLowerCase()}`;
    let hit = domainSeparators.get(key);
    if (!hit) {
      const p = await ethProvider(ep.rpcUrl);
      hit = iface.decodeFunctionResult('DOMAIN_SEPARATOR', await p.call({ to: token, data: iface.encodeFunctionData('DOMAIN_SEPARATOR') }))[0] as string;
      domainSeparators.set(key, hit);
    }
    return hit;
  }

  /**
   * Signs the gas wallet's transferWithAuthorization call. The call is simulated first (estimateGas), so an
   * authorization the token refuses (used nonce, balance, window) fails here and nothing is sent.
   */
  async prepareEip3009(ep: ChainEndpoints, network: string, token: string, a: Eip3009Authorization, signature: string): Promise<Prepared> {
    const p = await ethProvider(ep.rpcUrl);
    const ref = gasWalletRef('ethereum', network);
    const from = this.signer.address(ref);
    const { v, r, s } = splitSignature(signature);
    const data = iface.encodeFunctionData('transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s]);
    const gas = await p.estimateGas({ from, to: token, data });
    const fee = await p.getFeeData();
    const chainId = Number((await p.getNetwork()).chainId);
    return withLock(`${ep.rpcUrl}|${from}`, async () => {
      const key = `${ep.rpcUrl}|${from}`;
      const onChain = await p.getTransactionCount(from, 'pending');
      const nonce = Math.max(onChain, nextNonce.get(key) ?? 0);
      const signed = await this.signer.sign({
        chain: 'ethereum', key: ref,
        tx: { chainId, nonce, to: getAddress(token), value: '0', data, gasLimit: ((gas * 12n) / 10n).toString(), gasPrice: (fee.gasPrice ?? 1_000_000_000n).toString() },
      });
      nextNonce.set(key, nonce + 1);
      return { raw: signed.raw, hash: signed.hash };
    });
  }

  /** Adds the gas wallet's fee-payer signature to a verified payment transaction. */
  async prepareSolana(network: string, tx: VersionedTransaction): Promise<Prepared> {
    const message = Buffer.from(tx.message.serialize()).toString('base64');
    const signed = await this.signer.sign({ chain: 'solana', keys: [gasWalletRef('solana', network)], message });
    const sig = Buffer.from(signed.raw, 'base64').subarray(1, 65);
    tx.signatures[0] = new Uint8Array(sig);
    return { raw: Buffer.from(tx.serialize()).toString('base64'), hash: encodeBase58(sig) };
  }

  /** Sends signed bytes; a node that already has them is fine. Throws when the chain refuses them outright. */
  async send(chain: 'ethereum' | 'solana', ep: ChainEndpoints, raw: string): Promise<void> {
    if (chain === 'ethereum') {
      const p = await ethProvider(ep.rpcUrl);
      try {
        await p.broadcastTransaction(raw);
      } catch (e) {
        const m = String((e as Error).message);
        if (/already known|nonce too low|known transaction|already imported/i.test(m)) return;
        throw e;
      }
      return;
    }
    try {
      await solConnection(ep.rpcUrl).sendRawTransaction(Buffer.from(raw, 'base64'), { skipPreflight: false, maxRetries: 0 });
    } catch (e) {
      if (/already been processed/i.test(String((e as Error).message))) return;
      throw e;
    }
  }

  async status(chain: 'ethereum' | 'solana', ep: ChainEndpoints, hash: string): Promise<SettleStatus> {
    if (chain === 'ethereum') {
      const p: JsonRpcProvider = await ethProvider(ep.rpcUrl);
      const receipt = await p.getTransactionReceipt(hash);
      if (!receipt) return 'unknown';
      if (receipt.status !== 1) return 'failed';
      const head = await p.getBlockNumber();
      return head - receipt.blockNumber + 1 >= Math.max(1, ep.confirmations) ? 'confirmed' : 'unknown';
    }
    const { value } = await solConnection(ep.rpcUrl).getSignatureStatuses([hash], { searchTransactionHistory: true });
    const st = value[0];
    if (!st) return 'unknown';
    if (st.err) return 'failed';
    const rank = { processed: 0, confirmed: 1, finalized: 2 } as const;
    const want = rank[ep.commitment === 'processed' ? 'confirmed' : ep.commitment];
    return st.confirmationStatus && rank[st.confirmationStatus] >= want ? 'confirmed' : 'unknown';
  }
}
