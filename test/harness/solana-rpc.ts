// A Solana JSON-RPC node for tests: an HTTP server on 127.0.0.1 (free port) in front of LiteSVM,
// which executes real Solana transactions (system program, SPL Token, Token-2022, Associated
// Token Account) in process. LiteSVM keeps no history, so the harness logs every executed
// transaction (signature → slot, message, meta with pre/post balances and token balances) and
// answers history queries (getSignaturesForAddress, getTransaction) from that log, in the shapes a
// real node returns. Each landed transaction gets its own slot; the blockhash changes per slot.
//
//   const sol = await startSolanaRpc();
//   const usdc = await sol.createMint();                 // 6 decimals
//   const payer = await sol.newWallet(2_000_000_000n);   // funded by a logged airdrop
//   await sol.mintTo(usdc.mint, payer.address, 10_000_000n);
//   const sig = await sol.transferToken(payer, sessionAddress, usdc.mint, 2_500_000n);
//   // a listener talks to sol.url exactly as to a Solana RPC node
//   await sol.stop();
//
// Served methods: see SERVED_METHODS. Not served: websocket subscriptions (poll instead; a
// transaction is executed before sendTransaction returns), address lookup tables, blocks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToCheckedInstruction,
  getTransferCheckedInstruction,
  getTransferInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import {
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  decodeMint,
  decodeTokenAccount,
  fromBase58,
  jsonParsedInstruction,
  liteSvmErrorText,
  parsedAccountData,
  rustErrorToJson,
  toBase58,
  uiTokenAmount,
  type RawInstruction,
} from './solana-parsed.ts';

export const LAMPORTS_PER_SOL = 1_000_000_000n;
/** LiteSVM's fee: 5,000 lamports per signature (no priority fees are modelled). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

export const SERVED_METHODS = [
  'getHealth',
  'getVersion',
  'getGenesisHash',
  'getSlot',
  'getBlockHeight',
  'getEpochInfo',
  'getLatestBlockhash',
  'isBlockhashValid',
  'getBlockTime',
  'getBalance',
  'getAccountInfo',
  'getMultipleAccounts',
  'getTokenAccountBalance',
  'getTokenAccountsByOwner',
  'getMinimumBalanceForRentExemption',
  'getFeeForMessage',
  'getSignaturesForAddress',
  'getTransaction',
  'getSignatureStatuses',
  'sendTransaction',
  'simulateTransaction',
  'requestAirdrop',
] as const;

type Commitment = 'processed' | 'confirmed' | 'finalized';

interface TokenBalanceEntry {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
}

interface LoggedInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number | null;
}

/** One executed (landed) transaction, as the harness keeps it. */
export interface LoggedTransaction {
  seq: number;
  signature: string;
  slot: number;
  blockTime: number;
  version: 'legacy' | 0;
  wire: Uint8Array;
  accountKeys: string[];
  signer: boolean[];
  writable: boolean[];
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  recentBlockhash: string;
  signatures: string[];
  instructions: LoggedInstruction[];
  innerInstructions: { index: number; instructions: LoggedInstruction[] }[];
  meta: {
    err: unknown;
    fee: bigint;
    preBalances: bigint[];
    postBalances: bigint[];
    preTokenBalances: TokenBalanceEntry[];
    postTokenBalances: TokenBalanceEntry[];
    logMessages: string[];
    computeUnitsConsumed: bigint;
  };
}

export interface MintInfo {
  mint: string;
  authority: KeyPairSigner;
  decimals: number;
}

export interface SendOptions {
  /** execute even if the transaction fails (it lands with meta.err, fee charged); default false */
  skipPreflight?: boolean;
}

export interface SolanaRpcHarness {
  /** http://127.0.0.1:<port> */
  url: string;
  /** the LiteSVM instance (direct state access for assertions) */
  svm: LiteSVM;
  /** the funded key that pays airdrops and harness set-up transactions */
  faucet: KeyPairSigner;
  /** the current (processed) slot */
  slot(): number;
  /** slots pass without transactions (moves the confirmed/finalized slots along) */
  advanceSlots(n: number): void;
  /** every landed transaction, oldest first */
  transactions(): readonly LoggedTransaction[];
  getLoggedTransaction(signature: string): LoggedTransaction | undefined;
  balance(address: string): bigint;
  /** balance of owner's associated token account for mint (0 if it does not exist) */
  tokenBalance(owner: string, mint: string): Promise<bigint>;
  associatedTokenAddress(owner: string, mint: string, tokenProgram?: string): Promise<string>;
  /** a logged SOL transfer from the faucet; returns the signature */
  airdrop(to: string, lamports: bigint): Promise<string>;
  /** a new key pair, funded by an airdrop when lamports > 0 (default 1 SOL) */
  newWallet(lamports?: bigint): Promise<KeyPairSigner>;
  /** a new SPL Token mint (classic Token program), default 6 decimals, authority held by the harness */
  createMint(options?: { decimals?: number }): Promise<MintInfo>;
  /** creates owner's associated token account (idempotent); payer defaults to the faucet */
  createAssociatedTokenAccount(owner: string, mint: string, payer?: KeyPairSigner): Promise<{ address: string; signature: string }>;
  /** mints to owner's associated token account (created in the same transaction if needed) */
  mintTo(mint: string, owner: string, amount: bigint): Promise<string>;
  transferSol(from: KeyPairSigner, to: string, lamports: bigint, options?: SendOptions): Promise<string>;
  /**
   * Pays `toOwner` in SPL tokens the way a wallet does when told an address: from the sender's
   * associated token account to the recipient's associated token account, creating the latter
   * in the same transaction (createIdempotent, paid by the sender) unless createAta is false.
   * Uses transferChecked unless checked is false (then the plain transfer instruction).
   */
  transferToken(
    from: KeyPairSigner,
    toOwner: string,
    mint: string,
    amount: bigint,
    options?: SendOptions & { createAta?: boolean; checked?: boolean },
  ): Promise<string>;
  /** signs with the fee payer (and any signers inside the instructions) and executes; returns the signature */
  sendInstructions(feePayer: KeyPairSigner, instructions: readonly Instruction[], options?: SendOptions): Promise<string>;
  stop(): Promise<void>;
}

export interface StartSolanaRpcOptions {
  /** slots a transaction waits before it is `confirmed` (default 0) */
  confirmedLag?: number;
  /** slots a transaction waits before it is `finalized` (default 0: final at once) */
  finalizedLag?: number;
  /** faucet funds, lamports (default 1,000,000 SOL) */
  faucetLamports?: bigint;
}

class RpcError extends Error {
  code: number;
  data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const GENESIS_HASH = '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY';
const API_VERSION = '2.2.0';
const b64enc = getBase64Encoder();
const b64dec = getBase64Decoder();
const txDecoder = getTransactionDecoder();
const txEncoder = getTransactionEncoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

/** JSON with bigints written as plain integers (a node's u64 fields are JSON numbers). */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `__bigint__${v.toString()}` : v)).replace(
    /"__bigint__(-?\d+)"/g,
    '$1',
  );
}

function isFailed(r: TransactionMetadata | FailedTransactionMetadata): r is FailedTransactionMetadata {
  return r instanceof FailedTransactionMetadata;
}

export async function startSolanaRpc(options: StartSolanaRpcOptions = {}): Promise<SolanaRpcHarness> {
  const confirmedLag = Math.max(0, options.confirmedLag ?? 0);
  const finalizedLag = Math.max(confirmedLag, options.finalizedLag ?? 0);
  // Blockhashes are not checked against the latest one (a client may sign with any recent one,
  // as on a real cluster); the blockhash still changes every slot, and LiteSVM's history rejects
  // a transaction that was already processed.
  const svm = new LiteSVM().withBlockhashCheck(false);
  const faucet = await generateKeyPairSigner();
  // the faucet's funds are genesis state: set directly, not a logged transaction
  svm.setAccount({
    address: faucet.address,
    data: new Uint8Array(),
    executable: false,
    lamports: lamports(options.faucetLamports ?? 1_000_000n * LAMPORTS_PER_SOL),
    programAddress: address(SYSTEM_PROGRAM),
    space: 0n,
  });

  let currentSlot = Number(svm.getClock().slot);
  let lastBlockTime = Math.floor(Date.now() / 1000);
  const log: LoggedTransaction[] = [];
  const bySignature = new Map<string, LoggedTransaction>();
  const byAddress = new Map<string, LoggedTransaction[]>();
  const blockTimes = new Map<number, number>();

  const setSlot = (slot: number): void => {
    currentSlot = slot;
    lastBlockTime = Math.max(lastBlockTime, Math.floor(Date.now() / 1000));
    const clock = svm.getClock();
    clock.slot = BigInt(slot);
    clock.unixTimestamp = BigInt(lastBlockTime);
    svm.setClock(clock);
    svm.expireBlockhash();
  };
  setSlot(currentSlot);

  const slotAt = (c: Commitment | undefined): number => {
    if (c === 'processed') return currentSlot;
    if (c === 'confirmed') return currentSlot - confirmedLag;
    return currentSlot - finalizedLag; // the RPC default is finalized
  };
  const statusOf = (slot: number): Commitment =>
    slot <= currentSlot - finalizedLag ? 'finalized' : slot <= currentSlot - confirmedLag ? 'confirmed' : 'processed';
  const context = (): { apiVersion: string; slot: number } => ({ apiVersion: API_VERSION, slot: currentSlot });

  const account = (addr: string) => {
    const a = svm.getAccount(address(addr));
    return a.exists ? a : null;
  };
  const mintDecimals = (mint: string): number => {
    const a = account(mint);
    const m = a ? decodeMint(a.programAddress, new Uint8Array(a.data)) : null;
    return m ? m.decimals : 0;
  };

  interface Snapshot {
    lamports: bigint;
    token: { mint: string; owner: string; programId: string; amount: bigint } | null;
  }
  const snapshot = (keys: readonly string[]): Snapshot[] =>
    keys.map((k) => {
      const a = account(k);
      if (!a) return { lamports: 0n, token: null };
      const t = decodeTokenAccount(a.programAddress, new Uint8Array(a.data));
      return {
        lamports: a.lamports,
        token: t ? { mint: t.mint, owner: t.owner, programId: a.programAddress, amount: t.amount } : null,
      };
    });
  const tokenBalances = (snap: Snapshot[]): TokenBalanceEntry[] =>
    snap.flatMap((s, i) => (s.token ? [{ accountIndex: i, ...s.token }] : []));

  interface Decoded {
    tx: Transaction;
    signature: string;
    version: 'legacy' | 0;
    keys: string[];
    header: LoggedTransaction['header'];
    recentBlockhash: string;
    instructions: LoggedInstruction[];
    signatures: string[];
  }
  const decode = (wire: Uint8Array): Decoded => {
    let tx: Transaction;
    try {
      tx = txDecoder.decode(wire);
    } catch (e) {
      throw new RpcError(-32602, `invalid transaction: failed to deserialize: ${(e as Error).message}`);
    }
    const msg = messageDecoder.decode(tx.messageBytes);
    if (msg.version !== 'legacy' && msg.version !== 0) {
      throw new RpcError(-32602, `unsupported transaction version ${String(msg.version)}`);
    }
    if ('addressTableLookups' in msg && Array.isArray(msg.addressTableLookups) && msg.addressTableLookups.length > 0) {
      throw new RpcError(-32602, 'address lookup tables are not supported by this harness');
    }
    const keys = msg.staticAccounts.map(String);
    const sigs = keys
      .slice(0, msg.header.numSignerAccounts)
      .map((k) => tx.signatures[k as Address])
      .map((s) => (s ? toBase58(new Uint8Array(s)) : '1111111111111111111111111111111111111111111111111111111111111111'));
    return {
      tx,
      signature: sigs[0]!,
      version: msg.version,
      keys,
      header: {
        numRequiredSignatures: msg.header.numSignerAccounts,
        numReadonlySignedAccounts: msg.header.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: msg.header.numReadonlyNonSignerAccounts,
      },
      recentBlockhash: String(msg.lifetimeToken),
      instructions: (msg.instructions ?? []).map((ix) => ({
        programIdIndex: ix.programAddressIndex,
        accounts: [...(ix.accountIndices ?? [])],
        data: new Uint8Array(ix.data ?? new Uint8Array()),
        stackHeight: null,
      })),
      signatures: sigs,
    };
  };

  const simulationError = (failed: FailedTransactionMetadata): RpcError => {
    const text = liteSvmErrorText(failed);
    const meta = failed.meta();
    return new RpcError(-32002, `Transaction simulation failed: ${text}`, {
      accounts: null,
      err: rustErrorToJson(text),
      logs: meta.logs(),
      returnData: null,
      unitsConsumed: meta.computeUnitsConsumed(),
    });
  };

  /** Executes a wire transaction; returns its signature. The only way state changes. */
  const execute = (wire: Uint8Array, opts: SendOptions = {}): string => {
    const d = decode(wire);
    if (bySignature.has(d.signature)) {
      if (opts.skipPreflight) return d.signature; // a node drops the duplicate silently
      throw new RpcError(-32002, 'Transaction simulation failed: This transaction has already been processed', {
        err: 'AlreadyProcessed',
        logs: [],
        accounts: null,
        returnData: null,
        unitsConsumed: 0,
      });
    }
    if (!opts.skipPreflight) {
      const sim = svm.simulateTransaction(d.tx);
      if (sim instanceof FailedTransactionMetadata) throw simulationError(sim);
    }
    const pre = snapshot(d.keys);
    const result = svm.sendTransaction(d.tx);
    const post = snapshot(d.keys);
    const failed = isFailed(result);
    // a failed transaction lands only if it was charged (an execution error); others are rejected
    if (failed && post[0]!.lamports === pre[0]!.lamports) throw simulationError(result);
    const meta = failed ? result.meta() : result;
    const slot = currentSlot + 1;
    setSlot(slot);
    const inner = meta.innerInstructions().flatMap((list, index) =>
      list.length === 0
        ? []
        : [
            {
              index,
              instructions: list.map((ii) => {
                const c = ii.instruction();
                return {
                  programIdIndex: c.programIdIndex(),
                  accounts: Array.from(c.accounts()),
                  data: new Uint8Array(c.data()),
                  stackHeight: ii.stackHeight(),
                };
              }),
            },
          ],
    );
    const n = d.keys.length;
    const signer = d.keys.map((_, i) => i < d.header.numRequiredSignatures);
    const writable = d.keys.map((_, i) =>
      i < d.header.numRequiredSignatures
        ? i < d.header.numRequiredSignatures - d.header.numReadonlySignedAccounts
        : i < n - d.header.numReadonlyUnsignedAccounts,
    );
    const entry: LoggedTransaction = {
      seq: log.length,
      signature: d.signature,
      slot,
      blockTime: lastBlockTime,
      version: d.version,
      wire: new Uint8Array(wire),
      accountKeys: d.keys,
      signer,
      writable,
      header: d.header,
      recentBlockhash: d.recentBlockhash,
      signatures: d.signatures,
      instructions: d.instructions,
      innerInstructions: inner,
      meta: {
        err: failed ? rustErrorToJson(liteSvmErrorText(result)) : null,
        fee: failed ? pre[0]!.lamports - post[0]!.lamports : LAMPORTS_PER_SIGNATURE * BigInt(d.header.numRequiredSignatures),
        preBalances: pre.map((s) => s.lamports),
        postBalances: post.map((s) => s.lamports),
        preTokenBalances: tokenBalances(pre),
        postTokenBalances: tokenBalances(post),
        logMessages: meta.logs(),
        computeUnitsConsumed: meta.computeUnitsConsumed(),
      },
    };
    log.push(entry);
    bySignature.set(entry.signature, entry);
    blockTimes.set(slot, entry.blockTime);
    for (const k of new Set(d.keys)) {
      let list = byAddress.get(k);
      if (!list) byAddress.set(k, (list = []));
      list.push(entry);
    }
    return entry.signature;
  };

  // ---- RPC views ---------------------------------------------------------------------------

  const tokenBalanceJson = (b: TokenBalanceEntry) => ({
    accountIndex: b.accountIndex,
    mint: b.mint,
    owner: b.owner,
    programId: b.programId,
    uiTokenAmount: uiTokenAmount(b.amount, mintDecimals(b.mint)),
  });

  const transactionJson = (t: LoggedTransaction, encoding: string, maxVersion: number | undefined) => {
    if (t.version === 0 && maxVersion === undefined) {
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    const parsed = encoding === 'jsonParsed';
    const rawIx = (ix: LoggedInstruction): RawInstruction => ({
      programId: t.accountKeys[ix.programIdIndex]!,
      accounts: ix.accounts.map((i) => t.accountKeys[i]!),
      data: ix.data,
      stackHeight: ix.stackHeight,
    });
    const ixJson = (ix: LoggedInstruction) =>
      parsed
        ? jsonParsedInstruction(rawIx(ix))
        : { accounts: ix.accounts, data: toBase58(ix.data), programIdIndex: ix.programIdIndex, stackHeight: ix.stackHeight };
    const meta: Record<string, unknown> = {
      computeUnitsConsumed: t.meta.computeUnitsConsumed,
      err: t.meta.err,
      fee: t.meta.fee,
      innerInstructions: t.innerInstructions.map((g) => ({ index: g.index, instructions: g.instructions.map(ixJson) })),
      logMessages: t.meta.logMessages,
      postBalances: t.meta.postBalances,
      postTokenBalances: t.meta.postTokenBalances.map(tokenBalanceJson),
      preBalances: t.meta.preBalances,
      preTokenBalances: t.meta.preTokenBalances.map(tokenBalanceJson),
      rewards: [],
      status: t.meta.err === null ? { Ok: null } : { Err: t.meta.err },
    };
    if (!parsed) meta.loadedAddresses = { readonly: [], writable: [] };
    let transaction: unknown;
    if (encoding === 'base64') {
      transaction = [b64dec.decode(t.wire), 'base64'];
    } else if (encoding === 'base58') {
      transaction = [toBase58(t.wire), 'base58'];
    } else if (parsed) {
      const message: Record<string, unknown> = {
        accountKeys: t.accountKeys.map((k, i) => ({ pubkey: k, signer: t.signer[i], source: 'transaction', writable: t.writable[i] })),
        instructions: t.instructions.map(ixJson),
        recentBlockhash: t.recentBlockhash,
      };
      if (t.version === 0) message.addressTableLookups = [];
      transaction = { message, signatures: t.signatures };
    } else if (encoding === 'json') {
      const message: Record<string, unknown> = {
        accountKeys: t.accountKeys,
        header: t.header,
        instructions: t.instructions.map(ixJson),
        recentBlockhash: t.recentBlockhash,
      };
      if (t.version === 0) message.addressTableLookups = [];
      transaction = { message, signatures: t.signatures };
    } else {
      throw new RpcError(-32602, `Invalid params: unknown encoding ${encoding}`);
    }
    const out: Record<string, unknown> = { blockTime: t.blockTime, meta, slot: t.slot, transaction };
    if (maxVersion !== undefined) out.version = t.version;
    return out;
  };

  const accountJson = (addr: string, encoding: string) => {
    const a = account(addr);
    if (!a) return null;
    const data = new Uint8Array(a.data);
    let dataJson: unknown;
    if (encoding === 'jsonParsed') {
      dataJson = parsedAccountData(a.programAddress, data, mintDecimals) ?? [b64dec.decode(data), 'base64'];
    } else if (encoding === 'base64') {
      dataJson = [b64dec.decode(data), 'base64'];
    } else if (encoding === 'base58') {
      if (data.length > 128) {
        throw new RpcError(-32600, 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
      }
      dataJson = [toBase58(data), 'base58'];
    } else {
      throw new RpcError(-32602, `Invalid params: unsupported encoding ${encoding}`);
    }
    return {
      data: dataJson,
      executable: a.executable,
      lamports: a.lamports,
      owner: a.programAddress,
      rentEpoch: 18446744073709551615n,
      space: data.length,
    };
  };

  const decodeWire = (text: unknown, encoding: unknown): Uint8Array => {
    if (typeof text !== 'string') throw new RpcError(-32602, 'Invalid params: transaction must be a string');
    try {
      return encoding === 'base64' ? new Uint8Array(b64enc.encode(text)) : fromBase58(text);
    } catch {
      throw new RpcError(-32602, `invalid transaction: failed to decode ${String(encoding ?? 'base58')} string`);
    }
  };

  const visible = (t: LoggedTransaction, c: Commitment | undefined): boolean => t.slot <= slotAt(c);

  type Params = unknown[];
  const cfg = (p: Params, i: number): Record<string, unknown> =>
    p[i] && typeof p[i] === 'object' ? (p[i] as Record<string, unknown>) : {};
  const str = (p: Params, i: number, what: string): string => {
    const v = p[i];
    if (typeof v !== 'string') throw new RpcError(-32602, `Invalid params: ${what} expected`);
    return v;
  };
  const pubkey = (p: Params, i: number): string => {
    const v = str(p, i, 'pubkey');
    try {
      if (fromBase58(v).length !== 32) throw new Error();
    } catch {
      throw new RpcError(-32602, 'Invalid param: Invalid');
    }
    return v;
  };

  const methods: Record<string, (p: Params) => unknown> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'feature-set': 0, 'solana-core': API_VERSION }),
    getGenesisHash: () => GENESIS_HASH,
    getSlot: (p) => slotAt(cfg(p, 0).commitment as Commitment | undefined),
    getBlockHeight: (p) => slotAt(cfg(p, 0).commitment as Commitment | undefined),
    getEpochInfo: (p) => {
      const s = slotAt(cfg(p, 0).commitment as Commitment | undefined);
      return {
        absoluteSlot: s,
        blockHeight: s,
        epoch: Math.floor(s / 432_000),
        slotIndex: s % 432_000,
        slotsInEpoch: 432_000,
        transactionCount: log.length,
      };
    },
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: String(svm.latestBlockhash()), lastValidBlockHeight: currentSlot + 150 },
    }),
    isBlockhashValid: () => ({ context: context(), value: true }),
    getBlockTime: (p) => {
      const slot = Number(p[0]);
      const t = blockTimes.get(slot);
      if (t === undefined) throw new RpcError(-32004, `Block not available for slot ${slot}`);
      return t;
    },
    getBalance: (p) => ({ context: context(), value: account(pubkey(p, 0))?.lamports ?? 0n }),
    getAccountInfo: (p) => ({ context: context(), value: accountJson(pubkey(p, 0), String(cfg(p, 1).encoding ?? 'base58')) }),
    getMultipleAccounts: (p) => {
      const keys = p[0];
      if (!Array.isArray(keys)) throw new RpcError(-32602, 'Invalid params: array of pubkeys expected');
      const enc = String(cfg(p, 1).encoding ?? 'base64');
      return { context: context(), value: keys.map((k) => accountJson(String(k), enc)) };
    },
    getTokenAccountBalance: (p) => {
      const a = account(pubkey(p, 0));
      if (!a) throw new RpcError(-32602, 'Invalid param: could not find account');
      const t = decodeTokenAccount(a.programAddress, new Uint8Array(a.data));
      if (!t) throw new RpcError(-32602, 'Invalid param: not a Token account');
      return { context: context(), value: uiTokenAmount(t.amount, mintDecimals(t.mint)) };
    },
    getTokenAccountsByOwner: (p) => {
      const owner = pubkey(p, 0);
      const filter = cfg(p, 1);
      const enc = String(cfg(p, 2).encoding ?? 'base64');
      const programs =
        typeof filter.programId === 'string'
          ? [filter.programId]
          : typeof filter.mint === 'string'
            ? [account(filter.mint)?.programAddress ?? TOKEN_PROGRAM]
            : null;
      if (!programs) throw new RpcError(-32602, 'Invalid params: mint or programId filter expected');
      const value = programs.flatMap((prog) =>
        prog === TOKEN_PROGRAM || prog === TOKEN_2022_PROGRAM
          ? svm
              .getProgramAccounts(address(prog))
              .filter((a) => {
                const t = decodeTokenAccount(prog, new Uint8Array(a.data));
                return t !== null && t.owner === owner && (typeof filter.mint !== 'string' || t.mint === filter.mint);
              })
              .map((a) => ({ account: accountJson(a.address, enc), pubkey: a.address }))
          : [],
      );
      return { context: context(), value };
    },
    getMinimumBalanceForRentExemption: (p) => svm.minimumBalanceForRentExemption(BigInt(Number(p[0] ?? 0))),
    getFeeForMessage: (p) => {
      const bytes = new Uint8Array(b64enc.encode(str(p, 0, 'message')));
      const msg = messageDecoder.decode(bytes);
      return { context: context(), value: LAMPORTS_PER_SIGNATURE * BigInt(msg.header.numSignerAccounts) };
    },
    getSignaturesForAddress: (p) => {
      const addr = pubkey(p, 0);
      const c = cfg(p, 1);
      const limit = c.limit === undefined || c.limit === null ? 1000 : Number(c.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid limit; max 1000');
      const commitment = c.commitment as Commitment | undefined;
      let beforeSeq = Number.POSITIVE_INFINITY;
      if (typeof c.before === 'string') {
        const b = bySignature.get(c.before);
        if (!b) return [];
        beforeSeq = b.seq;
      }
      const untilSeq = typeof c.until === 'string' ? (bySignature.get(c.until)?.seq ?? -1) : -1;
      const list = byAddress.get(addr) ?? [];
      const out: unknown[] = [];
      for (let i = list.length - 1; i >= 0 && out.length < limit; i--) {
        const t = list[i]!;
        if (t.seq >= beforeSeq) continue;
        if (t.seq <= untilSeq) break;
        if (!visible(t, commitment)) continue;
        out.push({
          blockTime: t.blockTime,
          confirmationStatus: statusOf(t.slot),
          err: t.meta.err,
          memo: null,
          signature: t.signature,
          slot: t.slot,
        });
      }
      return out;
    },
    getTransaction: (p) => {
      const sig = str(p, 0, 'signature');
      const c = typeof p[1] === 'string' ? { encoding: p[1] } : cfg(p, 1);
      const t = bySignature.get(sig);
      const commitment = (c.commitment as Commitment | undefined) === 'processed' ? 'confirmed' : (c.commitment as Commitment | undefined);
      if (!t || !visible(t, commitment)) return null;
      const maxVersion =
        c.maxSupportedTransactionVersion === undefined || c.maxSupportedTransactionVersion === null
          ? undefined
          : Number(c.maxSupportedTransactionVersion);
      return transactionJson(t, String(c.encoding ?? 'json'), maxVersion);
    },
    getSignatureStatuses: (p) => {
      const sigs = p[0];
      if (!Array.isArray(sigs)) throw new RpcError(-32602, 'Invalid params: array of signatures expected');
      if (sigs.length > 256) throw new RpcError(-32602, 'Too many inputs provided; max 256');
      return {
        context: context(),
        value: sigs.map((s) => {
          const t = bySignature.get(String(s));
          if (!t) return null;
          const status = statusOf(t.slot);
          return {
            confirmationStatus: status,
            confirmations: status === 'finalized' ? null : currentSlot - t.slot,
            err: t.meta.err,
            slot: t.slot,
            status: t.meta.err === null ? { Ok: null } : { Err: t.meta.err },
          };
        }),
      };
    },
    sendTransaction: (p) => {
      const c = cfg(p, 1);
      return execute(decodeWire(p[0], c.encoding ?? 'base58'), { skipPreflight: c.skipPreflight === true });
    },
    simulateTransaction: (p) => {
      const c = cfg(p, 1);
      const d = decode(decodeWire(p[0], c.encoding ?? 'base58'));
      const sim = svm.simulateTransaction(d.tx);
      const meta = sim instanceof FailedTransactionMetadata ? sim.meta() : sim.meta();
      return {
        context: context(),
        value: {
          accounts: null,
          err: sim instanceof FailedTransactionMetadata ? rustErrorToJson(liteSvmErrorText(sim)) : null,
          logs: meta.logs(),
          returnData: null,
          unitsConsumed: meta.computeUnitsConsumed(),
        },
      };
    },
    requestAirdrop: (p) => {
      const to = pubkey(p, 0);
      const amount = BigInt(Number(p[1] ?? 0));
      if (amount <= 0n) throw new RpcError(-32602, 'Invalid params: lamports must be positive');
      return airdrop(to, amount);
    },
  };

  const handleOne = async (req: unknown): Promise<unknown> => {
    const r = (req ?? {}) as { id?: unknown; method?: unknown; params?: unknown; jsonrpc?: unknown };
    const id = r.id ?? null;
    try {
      if (typeof r.method !== 'string') throw new RpcError(-32600, 'Invalid request');
      const fn = methods[r.method];
      if (!fn) throw new RpcError(-32601, 'Method not found');
      const params = Array.isArray(r.params) ? r.params : r.params === undefined ? [] : [r.params];
      const result = await fn(params);
      return { jsonrpc: '2.0', result, id };
    } catch (e) {
      const err =
        e instanceof RpcError
          ? { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) }
          : { code: -32603, message: `Internal error: ${(e as Error).message}` };
      return { jsonrpc: '2.0', error: err, id };
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
          return;
        }
        const out = Array.isArray(body) ? await Promise.all(body.map(handleOne)) : await handleOne(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(stringify(out));
      })();
    });
  };

  const server: Server = createServer(onRequest);
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  // ---- helpers (build, sign and run transactions through the same path as sendTransaction) ----

  const sendInstructions = async (
    feePayer: KeyPairSigner,
    instructions: readonly Instruction[],
    opts: SendOptions = {},
  ): Promise<string> => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: svm.latestBlockhash() as Blockhash, lastValidBlockHeight: BigInt(currentSlot + 150) },
          m,
        ),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    return execute(new Uint8Array(txEncoder.encode(signed)), opts);
  };

  const airdrop = (to: string, amount: bigint): Promise<string> =>
    sendInstructions(faucet, [getTransferSolInstruction({ source: faucet, destination: address(to), amount })]);

  const associatedTokenAddress = async (owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM): Promise<string> => {
    const [ata] = await findAssociatedTokenPda({ owner: address(owner), mint: address(mint), tokenProgram: address(tokenProgram) });
    return ata;
  };

  const createAtaIx = (payer: KeyPairSigner, ata: string, owner: string, mint: string): Instruction =>
    getCreateAssociatedTokenIdempotentInstruction({
      payer,
      ata: address(ata),
      owner: address(owner),
      mint: address(mint),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });

  const mints = new Map<string, MintInfo>();

  const harness: SolanaRpcHarness = {
    url,
    svm,
    faucet,
    slot: () => currentSlot,
    advanceSlots: (n) => {
      if (n > 0) setSlot(currentSlot + n);
    },
    transactions: () => log,
    getLoggedTransaction: (signature) => bySignature.get(signature),
    balance: (addr) => account(addr)?.lamports ?? 0n,
    tokenBalance: async (owner, mint) => {
      const a = account(await associatedTokenAddress(owner, mint));
      const t = a ? decodeTokenAccount(a.programAddress, new Uint8Array(a.data)) : null;
      return t ? t.amount : 0n;
    },
    associatedTokenAddress,
    airdrop,
    newWallet: async (amount = LAMPORTS_PER_SOL) => {
      const w = await generateKeyPairSigner();
      if (amount > 0n) await airdrop(w.address, amount);
      return w;
    },
    createMint: async (opts = {}) => {
      const decimals = opts.decimals ?? 6;
      const mint = await generateKeyPairSigner();
      const authority = await generateKeyPairSigner();
      const space = BigInt(getMintSize());
      await sendInstructions(faucet, [
        getCreateAccountInstruction({
          payer: faucet,
          newAccount: mint,
          lamports: svm.minimumBalanceForRentExemption(space),
          space,
          programAddress: TOKEN_PROGRAM_ADDRESS,
        }),
        getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: authority.address }),
      ]);
      const info = { mint: mint.address, authority, decimals };
      mints.set(mint.address, info);
      return info;
    },
    createAssociatedTokenAccount: async (owner, mint, payer = faucet) => {
      const ata = await associatedTokenAddress(owner, mint);
      const signature = await sendInstructions(payer, [createAtaIx(payer, ata, owner, mint)]);
      return { address: ata, signature };
    },
    mintTo: async (mint, owner, amount) => {
      const info = mints.get(mint);
      if (!info) throw new Error(`mint ${mint} was not created by this harness`);
      const ata = await associatedTokenAddress(owner, mint);
      return sendInstructions(faucet, [
        createAtaIx(faucet, ata, owner, mint),
        getMintToCheckedInstruction({
          mint: address(mint),
          token: address(ata),
          mintAuthority: info.authority,
          amount,
          decimals: info.decimals,
        }),
      ]);
    },
    transferSol: (from, to, amount, opts) =>
      sendInstructions(from, [getTransferSolInstruction({ source: from, destination: address(to), amount })], opts),
    transferToken: async (from, toOwner, mint, amount, opts = {}) => {
      const source = await associatedTokenAddress(from.address, mint);
      const destination = await associatedTokenAddress(toOwner, mint);
      const ixs: Instruction[] = [];
      if (opts.createAta !== false) ixs.push(createAtaIx(from, destination, toOwner, mint));
      if (opts.checked === false) {
        ixs.push(getTransferInstruction({ source: address(source), destination: address(destination), authority: from, amount }));
      } else {
        ixs.push(
          getTransferCheckedInstruction({
            source: address(source),
            mint: address(mint),
            destination: address(destination),
            authority: from,
            amount,
            decimals: mintDecimals(mint),
          }),
        );
      }
      return sendInstructions(from, ixs, opts);
    },
    sendInstructions,
    stop: async () => {
      if (!server.listening) return;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return harness;
}
