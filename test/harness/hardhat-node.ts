// A real local Ethereum node for tests, demos and benchmarks: Hardhat 3's JSON-RPC node (EDR)
// in a child process on 127.0.0.1 with a free port, the standard Hardhat accounts funded, and
// helpers to deploy the repository's TestUSDC (compiled from source with solc-js), move tokens
// and ETH, mine, snapshot/revert (reorgs) and switch automine.
//
//   const node = await startHardhatNode();
//   const usdc = await node.deployTestUsdc();
//   await usdc.mint(node.accounts[1].address, 5_000_000n);
//   const { receipt } = await usdc.transfer(1, sessionAddress, 1_500_000n);
//   ...
//   await node.stop();
//
// The child exits by itself when this process goes away (its stdin closes), and stop() kills
// its whole process group, so no chain outlives a test run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Contract,
  ContractFactory,
  HDNodeWallet,
  JsonRpcProvider,
  Mnemonic,
  Wallet,
  type TransactionReceipt,
  type TransactionResponse,
} from 'ethers';
import { compileTestUsdc } from './solc.ts';

/** Hardhat's default mnemonic: accounts m/44'/60'/0'/0/0..19, 10,000 ETH each. */
export const HARDHAT_MNEMONIC = 'test test test test test test test test test test test junk';
export const HARDHAT_CHAIN_ID = 31337;
export const HARDHAT_ACCOUNT_COUNT = 20;

export interface HardhatAccount {
  address: string;
  privateKey: string;
}

export interface TxResult {
  hash: string;
  /** the mined receipt when automine is on; null while automine is off (mine, then node.receipt(hash)) */
  receipt: TransactionReceipt | null;
}

/** An account index into node.accounts, or any ethers Wallet connected or not. */
export type SignerRef = number | Wallet | HDNodeWallet;

export interface TestUsdc {
  /** EIP-55 address of the deployed contract */
  address: string;
  contract: Contract;
  /** block that holds the deployment: a listener's natural starting cursor */
  deployBlock: number;
  decimals: 6;
  /** owner-only mint (the deployer); emits Transfer(0x0, to, amount) */
  mint(to: string, amount: bigint): Promise<TxResult>;
  transfer(from: SignerRef, to: string, amount: bigint): Promise<TxResult>;
  /** several Transfer logs in one transaction (one per recipient, in order) */
  transferBatch(from: SignerRef, to: readonly string[], amounts: readonly bigint[]): Promise<TxResult>;
  balanceOf(address: string): Promise<bigint>;
}

export interface HardhatNode {
  /** http://127.0.0.1:<port> */
  url: string;
  chainId: number;
  /** ethers provider on the node: no request cache, 50 ms polling */
  provider: JsonRpcProvider;
  /** the 20 funded Hardhat accounts */
  accounts: readonly HardhatAccount[];
  /** a Wallet for account i (or any private key) connected to the node */
  wallet(indexOrKey: number | string): Wallet;
  /** raw JSON-RPC call */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  blockNumber(): Promise<number>;
  /** mines `blocks` empty-or-pending blocks (evm_mine, or hardhat_mine for many) */
  mine(blocks?: number): Promise<void>;
  /** evm_snapshot: returns the id to revert to */
  snapshot(): Promise<string>;
  /** evm_revert: the chain goes back to the snapshot (blocks after it leave the canonical chain) */
  revert(snapshotId: string): Promise<boolean>;
  /** evm_setAutomine */
  setAutomine(enabled: boolean): Promise<void>;
  /** evm_setIntervalMining (0 turns it off) */
  setIntervalMining(ms: number): Promise<void>;
  /** hardhat_setBalance */
  setBalance(address: string, wei: bigint): Promise<void>;
  sendEth(from: SignerRef, to: string, wei: bigint): Promise<TxResult>;
  receipt(hash: string): Promise<TransactionReceipt | null>;
  /** name: the token's EIP-712 name (default "Test USD Coin"; USDC's own is "USD Coin"), version "2" */
  deployTestUsdc(deployer?: SignerRef, options?: { name?: string }): Promise<TestUsdc>;
  /** kills the node (process group), waits for it to exit, removes its work dir; idempotent */
  stop(): Promise<void>;
  /** the last lines the node printed (diagnostics) */
  output(): string;
}

export interface StartHardhatNodeOptions {
  chainId?: number;
  /** how long to wait for the node to answer eth_chainId (default 90 s: a busy 2-core machine) */
  startTimeoutMs?: number;
  /** keep Hardhat's per-request console log on (default off: it costs time in benchmarks) */
  logging?: boolean;
  /** a fixed port (default 0: a free one) */
  port?: number;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

let accountCache: HardhatAccount[] | null = null;

/** The standard Hardhat accounts (derived once per process from the mnemonic). */
export function hardhatAccounts(): readonly HardhatAccount[] {
  if (!accountCache) {
    const mnemonic = Mnemonic.fromPhrase(HARDHAT_MNEMONIC);
    accountCache = [];
    for (let i = 0; i < HARDHAT_ACCOUNT_COUNT; i++) {
      const w = HDNodeWallet.fromMnemonic(mnemonic, `m/44'/60'/0'/0/${i}`);
      accountCache.push({ address: w.address, privateKey: w.privateKey });
    }
  }
  return accountCache;
}

async function rpcCall<T>(url: string, method: string, params: unknown[], timeoutMs = 30_000): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
  return body.result as T;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** a timer that does not keep the process (or jest) alive */
const deadlineTimer = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export async function startHardhatNode(options: StartHardhatNodeOptions = {}): Promise<HardhatNode> {
  const chainId = options.chainId ?? HARDHAT_CHAIN_ID;
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const workDir = mkdtempSync(join(tmpdir(), 'hardhat-node-'));
  const childScript = join(process.cwd(), 'test', 'harness', 'hardhat-node-child.ts');
  const args = JSON.stringify({ projectRoot: process.cwd(), workDir, hostname: '127.0.0.1', port: options.port ?? 0, chainId });

  installExitHook();
  const child = spawn(process.execPath, [childScript, args], {
    cwd: process.cwd(),
    detached: true, // own process group: stop() kills everything it started
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  live.add(child);

  // Always drain the pipes (the node logs every RPC call), keeping a bounded tail for diagnostics.
  const tail: string[] = [];
  let urlFound: string | null = null;
  let pending = '';
  const onData = (chunk: Buffer): void => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!urlFound) {
        const m = /JSON-RPC server at (http:\/\/[\d.]+:\d+)\/?/.exec(line);
        if (m) urlFound = m[1]!;
      }
      tail.push(line);
      if (tail.length > 200) tail.shift();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    provider?.destroy();
    killGroup(child, 'SIGTERM');
    const gone = await Promise.race([exited.then(() => true), deadlineTimer(5_000).then(() => false)]);
    if (!gone) {
      killGroup(child, 'SIGKILL');
      await Promise.race([exited, deadlineTimer(5_000)]);
    }
    child.stdin?.destroy();
    live.delete(child);
    rmSync(workDir, { recursive: true, force: true });
  };

  let provider: JsonRpcProvider | undefined;
  const deadline = Date.now() + startTimeoutMs;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`hardhat node exited during start (${child.exitCode ?? child.signalCode})`);
      }
      if (Date.now() > deadline) throw new Error(`hardhat node did not answer within ${startTimeoutMs} ms`);
      if (urlFound) {
        try {
          const id = await rpcCall<string>(urlFound, 'eth_chainId', [], 5_000);
          if (Number(id) === chainId) break;
        } catch {
          // not ready yet
        }
      }
      await sleep(100);
    }
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- node output ---\n${tail.join('\n')}`, { cause: err });
  }

  const url = urlFound!;
  if (options.logging !== true) await rpcCall(url, 'hardhat_setLoggingEnabled', [false]);
  provider = new JsonRpcProvider(url, chainId, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  const accounts = hardhatAccounts();
  let automine = true;

  const wallet = (indexOrKey: number | string): Wallet => {
    const key = typeof indexOrKey === 'number' ? accounts[indexOrKey]?.privateKey : indexOrKey;
    if (!key) throw new Error(`no hardhat account ${indexOrKey}`);
    return new Wallet(key, provider);
  };
  const signer = (ref: SignerRef): Wallet | HDNodeWallet =>
    typeof ref === 'number' ? wallet(ref) : ref.provider ? ref : ref.connect(provider!);

  const rpc = <T = unknown>(method: string, params: unknown[] = []): Promise<T> => rpcCall<T>(url, method, params);

  const receipt = async (hash: string): Promise<TransactionReceipt | null> => provider!.getTransactionReceipt(hash);

  // With automine on, the node mines inside eth_sendRawTransaction: the receipt is there at once.
  const settle = async (tx: TransactionResponse): Promise<TxResult> => {
    if (!automine) return { hash: tx.hash, receipt: null };
    for (let i = 0; i < 100; i++) {
      const r = await receipt(tx.hash);
      if (r) {
        if (r.status !== 1) throw new Error(`transaction ${tx.hash} reverted`);
        return { hash: tx.hash, receipt: r };
      }
      await sleep(50);
    }
    throw new Error(`no receipt for ${tx.hash}`);
  };

  const mine = async (blocks = 1): Promise<void> => {
    if (blocks === 1) await rpc('evm_mine');
    else if (blocks > 1) await rpc('hardhat_mine', [`0x${blocks.toString(16)}`]);
  };

  const deployTestUsdc = async (deployer: SignerRef = 0, options: { name?: string } = {}): Promise<TestUsdc> => {
    const { abi, bytecode } = compileTestUsdc();
    const owner = signer(deployer);
    const factory = new ContractFactory(abi as never, bytecode, owner);
    const deployTx = await factory.getDeployTransaction(options.name ?? 'Test USD Coin');
    const sent = await owner.sendTransaction(deployTx);
    if (!automine) await mine();
    let r: TransactionReceipt | null = null;
    for (let i = 0; i < 100 && !r; i++) {
      r = await receipt(sent.hash);
      if (!r) await sleep(50);
    }
    if (!r || r.status !== 1 || !r.contractAddress) throw new Error('TestUSDC deployment failed');
    const address = r.contractAddress;
    const contract = new Contract(address, abi as never, provider);
    const as = (ref: SignerRef): Contract => contract.connect(signer(ref)) as Contract;
    return {
      address,
      contract,
      deployBlock: r.blockNumber,
      decimals: 6,
      mint: async (to, amount) => settle(await as(deployer).getFunction('mint')(to, amount)),
      transfer: async (from, to, amount) => settle(await as(from).getFunction('transfer')(to, amount)),
      transferBatch: async (from, to, amounts) => settle(await as(from).getFunction('transferBatch')([...to], [...amounts])),
      balanceOf: async (address) => (await contract.getFunction('balanceOf')(address)) as bigint,
    };
  };

  return {
    url,
    chainId,
    provider,
    accounts,
    wallet,
    rpc,
    blockNumber: async () => Number(await rpc<string>('eth_blockNumber')),
    mine,
    snapshot: () => rpc<string>('evm_snapshot'),
    revert: (id) => rpc<boolean>('evm_revert', [id]),
    setAutomine: async (enabled) => {
      await rpc('evm_setAutomine', [enabled]);
      automine = enabled;
    },
    setIntervalMining: async (ms) => {
      await rpc('evm_setIntervalMining', [ms]);
    },
    setBalance: async (address, wei) => {
      await rpc('hardhat_setBalance', [address, `0x${wei.toString(16)}`]);
    },
    sendEth: async (from, to, wei) => settle(await signer(from).sendTransaction({ to, value: wei })),
    receipt,
    deployTestUsdc,
    stop,
    output: () => tail.join('\n'),
  };
}
