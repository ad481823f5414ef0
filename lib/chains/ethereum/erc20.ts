// ERC-20 Transfer logs: the event topic, decoding, and eth_getLogs over bounded block ranges
// that split in half when a provider says the range or the result set is too large.
// Pure: no broker, no store; the provider is anything with ethers' getLogs shape.
import { getAddress, id, zeroPadValue } from 'ethers';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC: string = id('Transfer(address,address,uint256)');

/** A log as ethers v6 returns it (`index`, numbers) or as raw JSON-RPC returns it (`logIndex`, hex). */
export interface LogLike {
  address: string;
  topics: readonly string[];
  data: string;
  blockNumber: number | string;
  blockHash: string;
  transactionHash: string;
  index?: number;
  logIndex?: number | string;
  removed?: boolean;
}

export interface Erc20Transfer {
  /** token contract, EIP-55 checksummed */
  token: string;
  /** EIP-55 checksummed */
  from: string;
  /** EIP-55 checksummed */
  to: string;
  /** integer amount in the token's smallest unit, as a digit string */
  amount: string;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  /** position of the log in its block: with (chain, tx hash) the deposit key */
  logIndex: number;
  removed: boolean;
}

function toNumber(v: number | string | undefined, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.length > 0) return Number(BigInt(v));
  throw new Error(`log without ${what}`);
}

/** The 32-byte topic that matches an address in an indexed `address` parameter. */
export function addressTopic(address: string): string {
  return zeroPadValue(getAddress(address), 32).toLowerCase();
}

function topicToAddress(topic: string): string {
  if (!/^0x[0-9a-fA-F]{64}$/.test(topic)) throw new Error(`not a 32-byte topic: ${topic}`);
  // the upper 12 bytes of an address topic are zero; reject anything else
  if (!/^0x0{24}/.test(topic)) throw new Error(`topic is not an address: ${topic}`);
  return getAddress(`0x${topic.slice(26)}`);
}

/**
 * Decodes an ERC-20 Transfer log. Returns null for anything that is not one (another event, or
 * an ERC-721 Transfer, whose tokenId is a fourth indexed topic and whose data is empty).
 */
export function decodeTransferLog(log: LogLike): Erc20Transfer | null {
  if (log.topics.length !== 3) return null;
  if (log.topics[0]!.toLowerCase() !== TRANSFER_TOPIC) return null;
  if (!/^0x[0-9a-fA-F]{64}$/.test(log.data)) return null;
  let from: string;
  let to: string;
  try {
    from = topicToAddress(log.topics[1]!);
    to = topicToAddress(log.topics[2]!);
  } catch {
    return null;
  }
  return {
    token: getAddress(log.address),
    from,
    to,
    amount: BigInt(log.data).toString(),
    blockNumber: toNumber(log.blockNumber, 'blockNumber'),
    blockHash: log.blockHash,
    transactionHash: log.transactionHash,
    logIndex: toNumber(log.index ?? log.logIndex, 'logIndex'),
    removed: log.removed === true,
  };
}

export interface LogFilter {
  address?: string | string[];
  topics?: (string | string[] | null)[];
}

/** ethers' Provider satisfies this (JsonRpcProvider#getLogs). */
export interface LogsProvider {
  getLogs(filter: LogFilter & { fromBlock: number; toBlock: number }): Promise<readonly LogLike[]>;
}

const RANGE_ERROR_PATTERNS: readonly RegExp[] = [
  /range (is )?too (large|wide|big)/i,
  /block range/i,
  /too many (results|logs|blocks)/i,
  /returned more than \d+/i,
  /more than \d+ (results|logs)/i,
  /response size (exceeded|should not|is larger)/i,
  /log response size/i,
  /exceed(s|ed)? (the )?max(imum)? (block )?range/i,
  /limited to a? ?[\d,]+ (block )?range/i,
  /ranges? over [\d,]+ blocks/i,
  /query timeout/i,
  /limit exceeded/i,
];

function collectMessages(err: unknown, depth = 0): string[] {
  if (err === null || err === undefined || depth > 4) return [];
  if (typeof err === 'string') return [err];
  if (typeof err !== 'object') return [];
  const e = err as Record<string, unknown>;
  const out: string[] = [];
  for (const k of ['message', 'shortMessage', 'body']) {
    if (typeof e[k] === 'string') out.push(e[k] as string);
  }
  for (const k of ['error', 'info', 'cause']) out.push(...collectMessages(e[k], depth + 1));
  return out;
}

function collectCodes(err: unknown, depth = 0): unknown[] {
  if (err === null || typeof err !== 'object' || depth > 4) return [];
  const e = err as Record<string, unknown>;
  return [e.code, ...['error', 'info', 'cause'].flatMap((k) => collectCodes(e[k], depth + 1))];
}

/**
 * True when a provider refused eth_getLogs because the block range or the result set was too
 * large (Infura -32005 "query returned more than 10000 results", Alchemy "Log response size
 * exceeded", QuickNode/others "block range too large", …): the caller should retry smaller.
 */
export function isRangeTooLargeError(err: unknown): boolean {
  if (collectCodes(err).some((c) => c === -32005)) return true;
  return collectMessages(err).some((m) => RANGE_ERROR_PATTERNS.some((p) => p.test(m)));
}

export interface GetLogsOptions {
  /** the largest block span asked for in one request (default 2,000) */
  maxBlockRange?: number;
  /** called after each successful request, e.g. to persist progress or count requests */
  onChunk?: (fromBlock: number, toBlock: number, logs: readonly LogLike[]) => void | Promise<void>;
}

/**
 * eth_getLogs over [fromBlock, toBlock] (inclusive) in chunks of at most maxBlockRange blocks.
 * When a chunk fails with a range/too-many-results error it is split in half and retried; the
 * span then grows back (doubling) up to maxBlockRange. A single block that still fails, or any
 * other error, is thrown. Logs come back in chain order, each exactly once.
 */
export async function getLogsChunked(
  provider: LogsProvider,
  filter: LogFilter,
  fromBlock: number,
  toBlock: number,
  options: GetLogsOptions = {},
): Promise<LogLike[]> {
  const maxRange = Math.max(1, Math.floor(options.maxBlockRange ?? 2000));
  if (!Number.isInteger(fromBlock) || !Number.isInteger(toBlock) || fromBlock < 0) {
    throw new Error(`invalid block range ${fromBlock}..${toBlock}`);
  }
  const out: LogLike[] = [];
  let span = maxRange;
  let from = fromBlock;
  while (from <= toBlock) {
    const to = Math.min(toBlock, from + span - 1);
    let logs: readonly LogLike[];
    try {
      logs = await provider.getLogs({ ...filter, fromBlock: from, toBlock: to });
    } catch (err) {
      if (to === from || !isRangeTooLargeError(err)) throw err;
      span = Math.ceil((to - from + 1) / 2);
      continue;
    }
    out.push(...logs);
    if (options.onChunk) await options.onChunk(from, to, logs);
    from = to + 1;
    if (span < maxRange) span = Math.min(maxRange, span * 2);
  }
  return out;
}

/**
 * Transfer logs of one token contract over a block range, decoded. `toAddresses`, when given and
 * small, is sent as an OR-list on the indexed `to` topic; with many addresses, leave it out and
 * filter the decoded transfers locally (providers cap the size of a topic list).
 */
export async function getTransfers(
  provider: LogsProvider,
  token: string,
  fromBlock: number,
  toBlock: number,
  options: GetLogsOptions & { toAddresses?: readonly string[] } = {},
): Promise<Erc20Transfer[]> {
  const topics: (string | string[] | null)[] = [TRANSFER_TOPIC];
  if (options.toAddresses && options.toAddresses.length > 0) {
    topics.push(null, options.toAddresses.map(addressTopic));
  }
  const tokenAddress = getAddress(token);
  const logs = await getLogsChunked(provider, { address: tokenAddress, topics }, fromBlock, toBlock, options);
  const out: Erc20Transfer[] = [];
  for (const log of logs) {
    const t = decodeTransferLog(log);
    if (t && t.token === tokenAddress) out.push(t);
  }
  return out;
}
