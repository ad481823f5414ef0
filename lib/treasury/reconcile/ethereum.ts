/**
 * Reading Ethereum for reconciliation (raw JSON-RPC through lib/treasury/reconcile/rpc.ts, counted):
 * a transaction's effect from the transaction and its receipt (ETH value and fee, ERC-20 Transfer logs),
 * balances at a stated block (eth_getBalance and balanceOf at that block tag), and the blocks and
 * token logs of a range for the scan of transfers out of the platform's addresses.
 */
import { Interface, getAddress, zeroPadValue } from 'ethers';
import { JsonRpc } from './rpc.ts';
import { NATIVE, addDelta, type TxEffect } from './effects.ts';

export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const ERC20 = new Interface(['function balanceOf(address) view returns (uint256)']);

const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const big = (h: string | null | undefined) => (h && h !== '0x' ? BigInt(h) : 0n);
const num = (h: string | null | undefined) => Number(big(h));
const topicAddress = (t: string) => getAddress(`0x${t.slice(26)}`);

interface RpcTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  nonce: string;
  blockNumber: string | null;
  gasPrice?: string;
}
interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  blockNumber: string;
}
interface RpcReceipt {
  status: string;
  blockNumber: string;
  gasUsed: string;
  effectiveGasPrice?: string;
  logs: RpcLog[];
}

export interface BlockTx {
  hash: string;
  from: string;
  to: string | null;
  value: bigint;
  nonce: number;
}

export interface TokenTransfer {
  token: string;
  from: string;
  to: string;
  amount: bigint;
  hash: string;
  block: number;
}

export class EthereumReader {
  readonly rpc: JsonRpc;

  constructor(rpc: JsonRpc) {
    this.rpc = rpc;
  }

  async head(): Promise<number> {
    return num(await this.rpc.call<string>('eth_blockNumber', []));
  }

  /** the block a transaction landed in and whether it succeeded; null while it is not mined */
  async landed(hash: string): Promise<{ block: number; ok: boolean } | null> {
    const r = await this.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
    return r ? { block: num(r.blockNumber), ok: num(r.status) === 1 } : null;
  }

  /** what a mined transaction did; null when it is not mined (or unknown) */
  async effect(hash: string): Promise<TxEffect | null> {
    const [tx, r] = await Promise.all([
      this.rpc.call<RpcTx | null>('eth_getTransactionByHash', [hash]),
      this.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]),
    ]);
    if (!tx || !r) return null;
    const ok = num(r.status) === 1;
    const fee = big(r.gasUsed) * big(r.effectiveGasPrice ?? tx.gasPrice);
    const from = getAddress(tx.from);
    const to = tx.to ? getAddress(tx.to) : null;
    const deltas = new Map<string, bigint>();
    addDelta(deltas, from, NATIVE, -fee);
    if (ok) {
      const value = big(tx.value);
      if (to && value > 0n) {
        addDelta(deltas, from, NATIVE, -value);
        addDelta(deltas, to, NATIVE, value);
      }
      for (const l of r.logs) {
        const t = transferOf(l);
        if (!t) continue;
        addDelta(deltas, t.from, t.token, -t.amount);
        addDelta(deltas, t.to, t.token, t.amount);
      }
    }
    return { hash, block: num(r.blockNumber), ok, fee, feePayer: from, deltas, rent: 0n, from, nonce: num(tx.nonce), to };
  }

  /** ETH (token null) or an ERC-20 balance at a block */
  async balance(address: string, token: string | null, block: number): Promise<bigint> {
    if (!token) return big(await this.rpc.call<string>('eth_getBalance', [getAddress(address), hex(block)]));
    const data = ERC20.encodeFunctionData('balanceOf', [getAddress(address)]);
    const out = await this.rpc.call<string>('eth_call', [{ to: getAddress(token), data }, hex(block)]);
    return out === '0x' ? 0n : BigInt(out);
  }

  /** the transactions of a block */
  async block(n: number): Promise<BlockTx[]> {
    const b = await this.rpc.call<{ transactions: RpcTx[] } | null>('eth_getBlockByNumber', [hex(n), true]);
    return (b?.transactions ?? []).map((t) => ({
      hash: t.hash,
      from: getAddress(t.from),
      to: t.to ? getAddress(t.to) : null,
      value: big(t.value),
      nonce: num(t.nonce),
    }));
  }

  /** ERC-20 Transfer logs of a token in [from, to], optionally only those sent from some addresses */
  async tokenTransfers(token: string, fromBlock: number, toBlock: number, senders?: string[]): Promise<TokenTransfer[]> {
    const topics: Array<string | string[] | null> = [TRANSFER_TOPIC];
    if (senders?.length) topics.push(senders.map((a) => zeroPadValue(getAddress(a), 32).toLowerCase()));
    const logs = await this.rpc.call<RpcLog[]>('eth_getLogs', [
      { address: getAddress(token), topics, fromBlock: hex(fromBlock), toBlock: hex(toBlock) },
    ]);
    return logs.flatMap((l) => {
      const t = transferOf(l);
      return t ? [{ ...t, hash: l.transactionHash, block: num(l.blockNumber) }] : [];
    });
  }
}

function transferOf(l: RpcLog): { token: string; from: string; to: string; amount: bigint } | null {
  if (l.topics.length !== 3 || l.topics[0]!.toLowerCase() !== TRANSFER_TOPIC) return null;
  return { token: getAddress(l.address), from: topicAddress(l.topics[1]!), to: topicAddress(l.topics[2]!), amount: big(l.data) };
}
