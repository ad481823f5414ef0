import {
  TRANSFER_TOPIC,
  addressTopic,
  decodeTransferLog,
  getLogsChunked,
  getTransfers,
  isRangeTooLargeError,
  type LogFilter,
  type LogLike,
  type LogsProvider,
} from '../../lib/chains/ethereum/erc20.ts';

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const BOB = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

const word = (n: bigint): string => `0x${n.toString(16).padStart(64, '0')}`;

function transferLog(block: number, logIndex: number, to = BOB, value = 1_500_000n): LogLike {
  return {
    address: TOKEN.toLowerCase(),
    topics: [TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(to)],
    data: word(value),
    blockNumber: block,
    blockHash: `0x${block.toString(16).padStart(64, '0')}`,
    transactionHash: `0x${(block * 1000 + logIndex).toString(16).padStart(64, '0')}`,
    index: logIndex,
  };
}

describe('TRANSFER_TOPIC and addressTopic', () => {
  test('is keccak256 of the ERC-20 Transfer signature', () => {
    expect(TRANSFER_TOPIC).toBe('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
  });

  test('pads an address to a lowercase 32-byte topic', () => {
    expect(addressTopic(ALICE)).toBe('0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8');
  });
});

describe('decodeTransferLog', () => {
  test('decodes an ethers-style log with checksummed addresses and a digit-string amount', () => {
    expect(decodeTransferLog(transferLog(7, 2))).toEqual({
      token: TOKEN,
      from: ALICE,
      to: BOB,
      amount: '1500000',
      blockNumber: 7,
      blockHash: `0x${(7).toString(16).padStart(64, '0')}`,
      transactionHash: `0x${(7002).toString(16).padStart(64, '0')}`,
      logIndex: 2,
      removed: false,
    });
  });

  test('decodes a raw JSON-RPC log (hex blockNumber and logIndex, removed flag)', () => {
    const raw: LogLike = {
      address: TOKEN,
      topics: [TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(BOB)],
      data: word(2n ** 255n + 1n),
      blockNumber: '0x1f',
      blockHash: '0xab',
      transactionHash: '0xcd',
      logIndex: '0x10',
      removed: true,
    };
    const t = decodeTransferLog(raw)!;
    expect(t.blockNumber).toBe(31);
    expect(t.logIndex).toBe(16);
    expect(t.removed).toBe(true);
    expect(t.amount).toBe((2n ** 255n + 1n).toString());
  });

  test('rejects other events, ERC-721 transfers and malformed topics', () => {
    const base = transferLog(1, 0);
    expect(decodeTransferLog({ ...base, topics: [word(1n), base.topics[1]!, base.topics[2]!] })).toBeNull();
    // ERC-721: tokenId is a 4th indexed topic and data is empty
    expect(decodeTransferLog({ ...base, topics: [...base.topics, word(5n)], data: '0x' })).toBeNull();
    expect(decodeTransferLog({ ...base, data: '0x' })).toBeNull();
    expect(decodeTransferLog({ ...base, topics: [TRANSFER_TOPIC, `0x${'ff'.repeat(32)}`, base.topics[2]!] })).toBeNull();
  });
});

describe('isRangeTooLargeError', () => {
  test.each([
    [{ code: -32005, message: 'query returned more than 10000 results' }],
    [new Error('Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range')],
    [{ error: { code: -32602, message: 'eth_getLogs is limited to a 10,000 range' } }],
    [{ info: { error: { code: -32000, message: 'block range is too wide' } } }],
    [{ shortMessage: 'could not coalesce error', error: { code: -32000, message: 'exceed maximum block range: 5000' } }],
    [new Error('ranges over 10000 blocks are not supported')],
    [{ message: 'query timeout exceeded' }],
  ])('recognises %j', (err) => {
    expect(isRangeTooLargeError(err)).toBe(true);
  });

  test.each([[new Error('connection refused')], [{ code: -32601, message: 'method not found' }], [null], ['boom']])(
    'does not treat %j as a range error',
    (err) => {
      expect(isRangeTooLargeError(err)).toBe(false);
    },
  );
});

/** A fake chain: one Transfer log in every block that is a multiple of 3, a range cap, a result cap. */
class FakeProvider implements LogsProvider {
  calls: [number, number][] = [];
  maxRange: number;
  maxResults: number;
  failOn: ((from: number, to: number) => unknown) | null = null;
  constructor(maxRange: number, maxResults: number) {
    this.maxRange = maxRange;
    this.maxResults = maxResults;
  }
  async getLogs(filter: LogFilter & { fromBlock: number; toBlock: number }): Promise<LogLike[]> {
    const { fromBlock, toBlock } = filter;
    this.calls.push([fromBlock, toBlock]);
    const injected = this.failOn?.(fromBlock, toBlock);
    if (injected) throw injected;
    if (toBlock - fromBlock + 1 > this.maxRange) {
      throw Object.assign(new Error('block range too large'), { code: -32000 });
    }
    const logs: LogLike[] = [];
    for (let b = fromBlock; b <= toBlock; b++) if (b % 3 === 0) logs.push(transferLog(b, 0));
    if (logs.length > this.maxResults) throw { code: -32005, message: `query returned more than ${this.maxResults} results` };
    return logs;
  }
}

describe('getLogsChunked', () => {
  test('reads a range in bounded chunks, in order, each log once', async () => {
    const p = new FakeProvider(1000, 10_000);
    const logs = await getLogsChunked(p, { address: TOKEN }, 0, 2500, { maxBlockRange: 1000 });
    expect(p.calls).toEqual([
      [0, 999],
      [1000, 1999],
      [2000, 2500],
    ]);
    expect(logs.map((l) => l.blockNumber)).toEqual(Array.from({ length: 834 }, (_, i) => i * 3));
  });

  test('splits in half on range errors and grows back, covering every block exactly once', async () => {
    const p = new FakeProvider(300, 10_000);
    const seen: [number, number][] = [];
    const logs = await getLogsChunked(p, {}, 10, 2009, {
      maxBlockRange: 1000,
      onChunk: (from, to) => {
        seen.push([from, to]);
      },
    });
    // successful chunks tile [10, 2009] without gaps or overlaps
    expect(seen[0]![0]).toBe(10);
    expect(seen[seen.length - 1]![1]).toBe(2009);
    for (let i = 1; i < seen.length; i++) expect(seen[i]![0]).toBe(seen[i - 1]![1] + 1);
    for (const [f, t] of seen) expect(t - f + 1).toBeLessThanOrEqual(300);
    const blocks = logs.map((l) => Number(l.blockNumber));
    expect(new Set(blocks).size).toBe(blocks.length);
    expect(blocks).toEqual(Array.from({ length: 666 }, (_, i) => 12 + i * 3));
  });

  test('splits on too-many-results errors', async () => {
    const p = new FakeProvider(10_000, 20);
    const logs = await getLogsChunked(p, {}, 0, 299, { maxBlockRange: 300 });
    expect(logs).toHaveLength(100);
    expect(p.calls.length).toBeGreaterThan(5);
  });

  test('rethrows other errors, and a range error on a single block', async () => {
    const p = new FakeProvider(1000, 10_000);
    p.failOn = (from) => (from >= 500 ? new Error('connection reset') : null);
    await expect(getLogsChunked(p, {}, 0, 999, { maxBlockRange: 200 })).rejects.toThrow('connection reset');

    const q = new FakeProvider(0, 10_000);
    await expect(getLogsChunked(q, {}, 5, 8, { maxBlockRange: 4 })).rejects.toThrow('block range too large');
    expect(q.calls[q.calls.length - 1]).toEqual([5, 5]);
  });

  test('an empty range asks nothing; an invalid one throws', async () => {
    const p = new FakeProvider(1000, 10_000);
    expect(await getLogsChunked(p, {}, 10, 9)).toEqual([]);
    expect(p.calls).toEqual([]);
    await expect(getLogsChunked(p, {}, -1, 9)).rejects.toThrow('invalid block range');
  });
});

describe('getTransfers', () => {
  test('filters on the Transfer topic (and the `to` topics when given) and decodes', async () => {
    let seenFilter: LogFilter | null = null;
    const provider: LogsProvider = {
      getLogs: async (filter) => {
        seenFilter = filter;
        return [transferLog(3, 0), { ...transferLog(3, 1), address: '0x0000000000000000000000000000000000000001' }];
      },
    };
    const transfers = await getTransfers(provider, TOKEN.toLowerCase(), 0, 10, { toAddresses: [BOB] });
    expect(seenFilter).toEqual({ address: TOKEN, topics: [TRANSFER_TOPIC, null, [addressTopic(BOB)]], fromBlock: 0, toBlock: 10 });
    // the log of another contract is dropped even if a provider returned it
    expect(transfers.map((t) => [t.to, t.amount, t.logIndex])).toEqual([[BOB, '1500000', 0]]);
  });
});
