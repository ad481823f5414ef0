/**
 * Outgoing Ethereum transactions: legacy (type 0) EIP-155 transactions, so the fee is exactly gas used ×
 * gas price and a native sweep can send "balance − fee". Confirmed at ETHEREUM_<NET>_CONFIRMATIONS depth.
 */
import { Interface, getAddress, type JsonRpcProvider, type TransactionReceipt } from 'ethers';
import type { Signer } from '../signer.ts';
import type { ChainTxDoc, TxAttempt, TxCheck, TxDriver, TxFees, TxIntent } from '../broadcast/types.ts';

const ERC20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)']);
export const NATIVE_TRANSFER_GAS = 21_000n;

export interface EthDriverOptions {
  network: string;
  provider: () => Promise<JsonRpcProvider>;
  signer: Signer;
  /** block depth: 1 = the receipt's block itself counts */
  confirmations: number;
  /** gas price multiplier applied to eth_gasPrice, in percent (default 125) */
  gasPricePercent?: number;
  /** replacement gas price increase, in percent (default 25; nodes require at least 10) */
  bumpPercent?: number;
  now?: () => Date;
}

type EthIntent = Extract<TxIntent, { chain: 'ethereum' }>;

/** eth_gasPrice with a margin (percent), so a transaction stays above a rising base fee for a while */
export async function marginGasPrice(p: JsonRpcProvider, percent = 125): Promise<bigint> {
  const raw = BigInt(await p.send('eth_gasPrice', []));
  return (raw * BigInt(percent)) / 100n + 1n;
}

export class EthereumTxDriver implements TxDriver {
  readonly chain = 'ethereum' as const;
  readonly network: string;
  private o: EthDriverOptions;
  private chainId: number | null = null;

  constructor(o: EthDriverOptions) {
    this.o = o;
    this.network = o.network;
  }

  private eth(intent: TxIntent): EthIntent {
    if (intent.chain !== 'ethereum') throw new Error('not an Ethereum intent');
    return intent;
  }

  addresses(intent: TxIntent): { from: string; to: string } {
    const i = this.eth(intent);
    return { from: this.o.signer.address(i.from), to: getAddress(i.to) };
  }

  async chainNonce(address: string): Promise<number> {
    return (await this.o.provider()).getTransactionCount(getAddress(address), 'latest');
  }

  /** eth_gasPrice with a margin, so the transaction stays above a rising base fee for a while */
  async gasPrice(): Promise<bigint> {
    return marginGasPrice(await this.o.provider(), this.o.gasPricePercent);
  }

  /** gas for the intent: 21,000 for ETH to an account without code, else the node's estimate + 30% */
  async gasLimit(intent: TxIntent): Promise<bigint> {
    const i = this.eth(intent);
    if (i.gas_limit) return BigInt(i.gas_limit);
    const p = await this.o.provider();
    const from = this.o.signer.address(i.from);
    if (i.kind === 'native') {
      const code = await p.getCode(getAddress(i.to));
      if (code === '0x') return NATIVE_TRANSFER_GAS;
      return ((await p.estimateGas({ from, to: getAddress(i.to), value: 1n })) * 130n) / 100n;
    }
    if (i.kind === 'call') return ((await p.estimateGas({ from, to: getAddress(i.to), data: i.data })) * 130n) / 100n;
    const data = ERC20.encodeFunctionData('transfer', [getAddress(i.to), BigInt(i.amount)]);
    return ((await p.estimateGas({ from, to: getAddress(i.token), data })) * 130n) / 100n;
  }

  private async id(): Promise<number> {
    if (this.chainId === null) this.chainId = Number((await (await this.o.provider()).getNetwork()).chainId);
    return this.chainId;
  }

  private async signWith(intent: EthIntent, nonce: number, gasPrice: bigint, gasLimit: bigint): Promise<TxAttempt> {
    let to: string, value: bigint, data: string;
    if (intent.kind === 'native') {
      to = getAddress(intent.to);
      value = BigInt(intent.value) - (intent.deduct_fee ? gasLimit * gasPrice : 0n);
      if (value <= 0n) throw new Error(`the amount ${intent.value} does not cover the network fee ${gasLimit * gasPrice}`);
      data = '0x';
    } else if (intent.kind === 'call') {
      to = getAddress(intent.to);
      value = 0n;
      data = intent.data;
    } else {
      to = getAddress(intent.token);
      value = 0n;
      data = ERC20.encodeFunctionData('transfer', [getAddress(intent.to), BigInt(intent.amount)]);
    }
    const { raw, hash } = await this.o.signer.sign({
      chain: 'ethereum',
      key: intent.from,
      tx: {
        chainId: await this.id(),
        nonce,
        to,
        value: value.toString(),
        data,
        gasLimit: gasLimit.toString(),
        gasPrice: gasPrice.toString(),
      },
    });
    return {
      raw,
      hash,
      signed_at: (this.o.now?.() ?? new Date()).toISOString(),
      gas_price: gasPrice.toString(),
      gas_limit: gasLimit.toString(),
      value: value.toString(),
    };
  }

  /** the gas price and the gas limit, asked at once */
  async fees(intent: TxIntent): Promise<TxFees> {
    const i = this.eth(intent);
    const [gas_price, gas_limit] = await Promise.all([i.gas_price ? BigInt(i.gas_price) : this.gasPrice(), this.gasLimit(i)]);
    return { gas_price, gas_limit };
  }

  async sign(intent: TxIntent, nonce: number | null, _rowId?: string, fees?: TxFees): Promise<TxAttempt> {
    const i = this.eth(intent);
    if (nonce === null) throw new Error('an Ethereum transaction needs a nonce');
    const f = fees ?? (await this.fees(i));
    return this.signWith(i, nonce, f.gas_price, f.gas_limit);
  }

  /** a pinned transaction (gas limit and price both in the intent) is never replaced: see TxDriver.replaceable */
  replaceable(doc: ChainTxDoc): boolean {
    const i = this.eth(doc.intent);
    return !(i.gas_limit && i.gas_price);
  }

  /** same nonce, gas price raised by bumpPercent (or to the current price if that is higher) */
  async resign(doc: ChainTxDoc): Promise<TxAttempt> {
    const i = this.eth(doc.intent);
    const last = doc.attempts[doc.attempts.length - 1]!;
    const bumped = (BigInt(last.gas_price!) * BigInt(100 + (this.o.bumpPercent ?? 25))) / 100n + 1n;
    const current = await this.gasPrice();
    return this.signWith(i, doc.nonce!, bumped > current ? bumped : current, BigInt(last.gas_limit!));
  }

  async send(raw: string): Promise<void> {
    const p = await this.o.provider();
    try {
      await p.send('eth_sendRawTransaction', [raw]);
    } catch (e) {
      // the node has it already (a re-broadcast): that is success
      if (/already known|known transaction|already imported|AlreadyKnown/i.test(String((e as Error).message))) return;
      throw e;
    }
  }

  async check(doc: ChainTxDoc): Promise<TxCheck> {
    const p = await this.o.provider();
    const receipts = () => Promise.all([...doc.attempts].reverse().map(async (a) => ({ a, r: await p.getTransactionReceipt(a.hash) })));
    // the head and the receipts are asked at once (one batch of calls); a receipt in a block past the head
    // read is not at depth yet
    const [head, first] = await Promise.all([p.getBlockNumber(), receipts()]);
    const landed = await this.landed(p, head, first);
    if (landed) return landed;
    const depthBlock = head - this.o.confirmations + 1;
    const usedAtDepth =
      depthBlock >= 0 && doc.nonce !== null ? (await p.getTransactionCount(getAddress(doc.from_address), depthBlock)) > doc.nonce : false;
    if (!usedAtDepth) return { state: 'pending' };
    // the nonce was used at depth: by one of ours whose receipt exists by now (it may have landed after the
    // receipts above were read), else by another transaction
    const again = await this.landed(p, head, await receipts());
    if (again) return again;
    return { state: 'failed', reason: `nonce ${doc.nonce} was used by another transaction`, hash: null, block: null, fee: null };
  }

  /** what the newest attempt with a receipt says at this head (null: none has a receipt) */
  private async landed(
    p: JsonRpcProvider,
    head: number,
    found: Array<{ a: TxAttempt; r: TransactionReceipt | null }>,
  ): Promise<TxCheck | null> {
    const hit = found.find((x) => x.r !== null);
    if (!hit) return null;
    const { a } = hit;
    const r = hit.r!;
    if (head - r.blockNumber + 1 < this.o.confirmations) return { state: 'pending', landed: true };
    // the receipt must still be on the canonical chain at that height
    const block = await p.getBlock(r.blockNumber);
    if (!block || block.hash !== r.blockHash) return { state: 'pending' };
    const fee = (r.gasUsed * (r.gasPrice ?? BigInt(a.gas_price!))).toString();
    if (r.status === 1) return { state: 'confirmed', hash: a.hash, block: r.blockNumber, fee };
    return { state: 'failed', reason: 'the transaction reverted on chain', hash: a.hash, block: r.blockNumber, fee };
  }
}
