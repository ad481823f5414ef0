/**
 * Spot rates through HTTP: a Chainlink AggregatorV3 mock (compiled from contracts/MockAggregatorV3.sol with
 * solc-js) on a real Hardhat node, a local HTTP server speaking CoinGecko's /simple/price shape, and the
 * static table; fallback order, staleness, refusals, 503, the cache shared through the store by two nodes,
 * and the rate a completing session records.
 */
import { join } from 'node:path';
import { Contract, ContractFactory } from 'ethers';
import { startHardhatNode, type HardhatNode } from '../harness/hardhat-node.ts';
import { compileSolidity } from '../harness/solc.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { fetchBytes, pdfText } from '../helpers/pdf.ts';
import { ETH_USDC, merchant } from './sessions-helpers.ts';
import { eventually } from '../helpers/wait.ts';
import { FakeCoinGecko } from '../helpers/fake-coingecko.ts';

describe('spot rates', () => {
  let chain: HardhatNode;
  let ethFeed: Contract;
  let usdcFeed: Contract;
  let gecko: FakeCoinGecko;
  let t: TestNode;
  let clock = Math.floor(Date.now() / 1000) * 1000;
  const nowS = () => Math.floor(clock / 1000);
  const MIN = 60_000;
  let env: Record<string, string>;

  const setRound = async (feed: Contract, answer: bigint, updatedAt: number) => {
    const tx = await feed.getFunction('setRound')(answer, updatedAt);
    await tx.wait();
  };
  const rates = (query = '') => t.request('GET', `/v1/rates${query}`);

  beforeAll(async () => {
    chain = await startHardhatNode();
    const { abi, bytecode } = compileSolidity('contracts/MockAggregatorV3.sol', 'MockAggregatorV3');
    const deploy = async (desc: string) => {
      const c = await new ContractFactory(abi as never, bytecode, chain.wallet(0)).deploy(8, desc);
      await c.waitForDeployment();
      return new Contract(await c.getAddress(), abi as never, chain.wallet(0));
    };
    ethFeed = await deploy('ETH / USD');
    usdcFeed = await deploy('USDC / USD');
    await setRound(ethFeed, 345678912345n, nowS() - 60);
    await setRound(usdcFeed, 99991000n, nowS() - 60);
    gecko = new FakeCoinGecko();
    await gecko.start();
    const usdc = await chain.deployTestUsdc();
    env = {
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      RATES_CHAINLINK_FEEDS: `ETH:USD=ethereum:testnet:${await ethFeed.getAddress()};USDC:USD=ethereum:testnet:${await usdcFeed.getAddress()}`,
      RATES_HTTP_URL: gecko.url,
      RATES_STATIC: 'USDC:USD=1',
      RATE_SOURCES: 'ETH:USD=chainlink,http;USDC:USD=chainlink,http,static;*=http',
      RATES_CACHE_TTL: '60',
      RATES_MAX_AGE: '1h',
      RATES_REFUSE_AGE: '25h',
      CHAIN_POLL_INTERVAL_MS: '60000',
    };
    t = await startTestNode(env, { now: () => new Date(clock) });
  });

  afterAll(async () => {
    await t?.stop();
    await gecko?.stop();
    await chain?.stop();
  });

  it('reads a Chainlink feed exactly (decimals from the contract) and caches it', async () => {
    clock += 2 * MIN;
    const res = await rates('?base=eth');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          base: 'ETH',
          quote: 'USD',
          rate: '3456.78912345',
          source: 'chainlink',
          as_of: new Date((nowS() - 180) * 1000).toISOString(),
          stale: false,
        },
      ],
    });
    // within RATES_CACHE_TTL the cached value answers, even after the feed moved
    await setRound(ethFeed, 350000000000n, nowS());
    expect((await rates('?base=ETH')).body.data[0].rate).toBe('3456.78912345');
    clock += 61_000;
    expect((await rates('?base=ETH')).body.data[0].rate).toBe('3500');
  });

  it('flags a stale round, and prefers a fresh later source over it (fallback order)', async () => {
    clock += 2 * MIN;
    await setRound(ethFeed, 360000000000n, nowS() - 2 * 3600); // 2 h old: stale (max age 1 h), not refused (25 h)
    gecko.prices = {};
    const stale = await rates('?base=ETH');
    expect(stale.body.data[0]).toMatchObject({ rate: '3600', source: 'chainlink', stale: true });

    clock += 2 * MIN;
    gecko.prices = { ethereum: { usd: '3612.123456789012345678', last_updated_at: nowS() - 30 } };
    const fresh = await rates('?base=ETH&quote=usd');
    expect(fresh.body.data[0]).toEqual({
      base: 'ETH',
      quote: 'USD',
      rate: '3612.123456789012345678',
      source: 'http',
      as_of: new Date((nowS() - 30) * 1000).toISOString(),
      stale: false,
    });
    expect(gecko.hits.at(-1)).toBe('ethereum');
  });

  it('refuses answers <= 0, incomplete and too old rounds, and falls back in order down to the static table', async () => {
    clock += 2 * MIN;
    await setRound(usdcFeed, 0n, nowS());
    gecko.status = 500;
    const usdc = await rates('?base=USDC');
    expect(usdc.body.data[0]).toMatchObject({ base: 'USDC', rate: '1', source: 'static', stale: false });

    clock += 2 * MIN;
    await setRound(usdcFeed, -5n, nowS());
    expect((await rates('?base=USDC')).body.data[0].source).toBe('static');
    clock += 2 * MIN;
    await setRound(usdcFeed, 99990000n, 0); // incomplete round
    expect((await rates('?base=USDC')).body.data[0].source).toBe('static');
    clock += 2 * MIN;
    await setRound(usdcFeed, 100010000n, nowS() - 26 * 3600); // older than RATES_REFUSE_AGE
    expect((await rates('?base=USDC')).body.data[0].source).toBe('static');
    clock += 2 * MIN;
    await setRound(usdcFeed, 100010000n, nowS() + 3600); // dated an hour ahead: a broken feed
    expect((await rates('?base=USDC')).body.data[0].source).toBe('static');
    clock += 2 * MIN;
    await setRound(usdcFeed, 100010000n, nowS() - 10);
    expect((await rates('?base=USDC')).body.data[0]).toMatchObject({ rate: '1.0001', source: 'chainlink', stale: false });
    gecko.status = 200;
  });

  it('answers 503 in the envelope when no source has a value, never an invented number', async () => {
    gecko.prices = {};
    const sol = await rates('?base=SOL');
    expect(sol.status).toBe(503);
    expect(sol.body).toMatchObject({ code: 1, message: expect.stringMatching(/no rate for SOL\/USD .*http: no usd price for solana/) });

    // a pair without any configured source
    const eur = await rates('?base=USDC&quote=EUR');
    expect(eur.status).toBe(503);
    expect(eur.body.message).toMatch(/USDC\/EUR/);

    // every source down and the last known value too old: 503 (the cache is not served past RATES_REFUSE_AGE)
    clock += 26 * 3600_000;
    await setRound(ethFeed, 370000000000n, nowS() - 26 * 3600);
    gecko.status = 502;
    const eth = await rates('?base=ETH');
    expect(eth.status).toBe(503);
    expect(eth.body.message).toMatch(/ETH\/USD.*chainlink: the latest round is from .* older than 90000 s.*http: HTTP 502/);
    gecko.status = 200;
  });

  it('lists every enabled token against USD by default, naming the pairs it has no rate for', async () => {
    clock += 2 * MIN;
    await setRound(ethFeed, 300000000000n, nowS());
    await setRound(usdcFeed, 100000000n, nowS());
    const res = await rates();
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { base: string; rate: string }) => `${r.base}=${r.rate}`).sort()).toEqual(['ETH=3000', 'USDC=1']);
    expect(res.body.unavailable).toEqual([{ base: 'SOL', quote: 'USD', message: expect.stringMatching(/SOL\/USD/) }]);
  });

  it('refuses bad queries with a 400', async () => {
    expect((await rates('?base=DOGE')).status).toBe(400);
    expect((await rates('?base=DOGE')).body.message).toMatch(/enabled rail/);
    const unknown = await rates('?pair=ETH');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 3, message: expect.stringMatching(/unknown field 'pair'/) });
    expect((await rates('?quote=US$')).status).toBe(400);
  });

  it('shares fetched rates between nodes through the store', async () => {
    clock += 2 * MIN;
    gecko.prices = {};
    gecko.hits = [];
    const second = await startTestNode(
      { ...env, DATA_DIR: tempDir(), STORE_URL: `sqlite:${join(t.dataDir, 'service.db')}` },
      { now: () => new Date(clock) },
    );
    try {
      // a starting node warms the rates of its tokens in the background: let that attempt (no SOL price yet)
      // end before counting fetches, or it races the first request below and fetches SOL a second time
      await eventually('the second node to try SOL while warming up', () => gecko.hits.includes('solana'));
      await eventually('the warm-up to end', async () => (await second.request('GET', '/v1/rates?base=SOL')).status === 503);
      gecko.prices = { solana: { usd: '142.5', last_updated_at: nowS() } };
      gecko.hits = [];
      expect((await rates('?base=SOL')).body.data[0]).toMatchObject({ rate: '142.5', source: 'http' });
      const fromB = await second.request('GET', '/v1/rates?base=SOL');
      expect(fromB.body.data[0]).toMatchObject({ rate: '142.5', source: 'http' });
      expect(gecko.hits.filter((h) => h === 'solana')).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });

  it('records the rate on a session when it completes and values the receipt with it', async () => {
    clock += 2 * MIN;
    await setRound(usdcFeed, 99987000n, nowS() - 5);
    expect((await rates('?base=USDC')).body.data[0].rate).toBe('0.99987');
    const m = await merchant(t);
    const s = (
      await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 25, expires_in: '1h', paymentMethod: ETH_USDC } })
    ).body;
    expect(s.completion_rate).toBeUndefined();
    const done = await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey });
    expect(done.body.status).toBe('completed');
    const expected = {
      base: 'USDC',
      quote: 'USD',
      rate: '0.99987',
      source: 'chainlink',
      as_of: new Date((nowS() - 5) * 1000).toISOString(),
      stale: false,
    };
    expect(done.body.completion_rate).toEqual(expected);
    // later rates do not change what was recorded
    clock += 2 * MIN;
    await setRound(usdcFeed, 95000000n, nowS());
    expect((await rates('?base=USDC')).body.data[0].rate).toBe('0.95');
    expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: m.apiKey })).body.completion_rate).toEqual(expected);
    const pdf = await fetchBytes(`${t.url}/v1/payment_sessions/${s.session_id}/receipt`, { 'X-API-Key': m.apiKey });
    const { text } = await pdfText(pdf.bytes);
    expect(text).toContain('Value at completion (USD): 25.00 USD');
    expect(text).toContain(`Rate: 1 USDC = 0.99987 USD (source chainlink, as of ${expected.as_of.slice(0, 19).replace('T', ' ')} UTC)`);
  });
});
