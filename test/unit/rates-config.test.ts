/** RATE_SOURCES and RATES_* parsing, and the completion rate the session actor records (pure, no broker). */
import { loadRatesConfig, sourcesFor } from '../../config/rates.ts';
import { decideSession, paymentSessionBehaviorWithRates, type PaymentSessionState } from '../../lib/sessions/payment-session.ts';

describe('loadRatesConfig', () => {
  it('has defaults that invent nothing: no static table, no HTTP source, mainnet Chainlink feeds, the pegs last', () => {
    const c = loadRatesConfig({});
    expect(sourcesFor(c, 'USDC:USD')).toEqual(['chainlink', 'http', 'static', 'peg']);
    expect(c.static).toEqual({});
    expect(c.httpUrl).toBe('');
    expect(c.chainlinkFeeds['ETH:USD']).toEqual({
      chain: 'ethereum',
      network: 'mainnet',
      address: '0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419',
      maxAgeS: null,
    });
    expect([c.cacheTtlMs, c.maxAgeMs, c.refuseAgeMs]).toEqual([60_000, 3_600_000, 90_000_000]);
  });

  it('reads ordered sources per pair, feeds with their own limit, ids, a static table and durations', () => {
    const c = loadRatesConfig({
      RATE_SOURCES: 'eth:usd=http,chainlink; *=static',
      RATES_CHAINLINK_FEEDS: `ETH:USD=ethereum:testnet:0x${'1'.repeat(40)}:7200`,
      RATES_HTTP_URL: 'http://rates.local/api/v3/',
      RATES_HTTP_IDS: 'USDC=usd-coin;ETH=weth',
      RATES_STATIC: 'USDC:USD=1,USDC:EUR=0.92',
      RATES_MAX_AGE: '15m',
      RATES_CACHE_TTL: '2.5',
    });
    expect(sourcesFor(c, 'ETH:USD')).toEqual(['http', 'chainlink']);
    expect(sourcesFor(c, 'SOL:USD')).toEqual(['static']);
    expect(c.chainlinkFeeds['ETH:USD'].maxAgeS).toBe(7200);
    expect(c.httpUrl).toBe('http://rates.local/api/v3');
    expect(c.httpIds).toEqual({ USDC: 'usd-coin', ETH: 'weth' });
    expect(c.static).toEqual({ 'USDC:USD': '1', 'USDC:EUR': '0.92' });
    expect([c.maxAgeMs, c.cacheTtlMs]).toEqual([900_000, 2500]);
  });

  it.each([
    [
      { RATE_SOURCES: '*=chainlink,oracle' },
      /^RATE_SOURCES="\*=chainlink,oracle": names sources chainlink, http, static or peg; 'oracle' is not one$/,
    ],
    [{ RATE_SOURCES: 'USDC=static' }, /^RATE_SOURCES="USDC=static": names pairs like USDC:USD/],
    [{ RATE_SOURCES: 'static' }, /^RATE_SOURCES="static": must be <pair or \*>=<sources>/],
    [{ RATES_STATIC: 'USDC:USD=0' }, /positive decimal/],
    [{ RATES_STATIC: 'USDC:USD=1e0' }, /positive decimal/],
    [{ RATES_CHAINLINK_FEEDS: 'ETH:USD=solana:mainnet:abc' }, /ethereum:<testnet\|mainnet>/],
    [{ RATES_HTTP_URL: 'ftp://x' }, /http\(s\) URL/],
    [{ RATES_MAX_AGE: '-1' }, /positive number of seconds/],
  ])('refuses %p', (env, message) => {
    expect(() => loadRatesConfig(env as Record<string, string>)).toThrow(message);
  });
});

describe('completion rate on the session actor', () => {
  const t0 = new Date('2026-01-01T00:00:00.000Z');
  const base = (): PaymentSessionState =>
    decideSession(
      null,
      {
        type: 'create',
        session: {
          id: 'ps_r',
          merchant_id: 'mer_x',
          demo: false,
          sandbox: true,
          environment: 'sandbox',
          method_id: 0,
          chain: 'ethereum',
          network: 'testnet',
          token: 'USDC',
          decimals: 6,
          expected_subunits: '1000000',
          received_subunits: '0',
          address: '0xabc',
          address_index: 0,
          key_fingerprint: 'f',
          status: 'pending',
          metadata: {},
          expires_at: '2026-01-01T01:00:00.000Z',
          expiry_due_at: null,
          completed_at: null,
          expired_at: null,
          created_at: t0.toISOString(),
          updated_at: t0.toISOString(),
          deposits: [],
          events: [],
        },
      },
      t0,
    ).state!;
  const rateAt = (rate: string) => ({ base: 'USDC', quote: 'USD', rate, source: 'static', as_of: t0.toISOString(), stale: false });
  const credit = (key: string, amount: string) => ({
    type: 'credit' as const,
    deposit: { key, tx_hash: key, index: 0, amount_subunits: amount, token: 'USDC', confirmations: 1, detected_at: t0.toISOString() },
  });

  it('records the rate at completion, drops it when a revert reopens, and records the new one at the next completion', async () => {
    let current = '0.999';
    const calls: string[] = [];
    const behavior = paymentSessionBehaviorWithRates(async (token) => {
      calls.push(token);
      return rateAt(current);
    });
    let s = base();
    const partial = await behavior.handle(structuredClone(s), credit('a', '400000'), t0);
    s = partial.state!;
    expect(s.status).toBe('partial_paid');
    expect(s.completion_rate).toBeUndefined();
    expect(calls).toEqual([]);
    s = (await behavior.handle(structuredClone(s), credit('b', '600000'), t0)).state!;
    expect(s.status).toBe('completed');
    expect(s.completion_rate).toEqual(rateAt('0.999'));
    // an overpayment on a completed session does not move the recorded rate
    current = '0.5';
    s = (await behavior.handle(structuredClone(s), credit('c', '1'), t0)).state!;
    expect(s.completion_rate?.rate).toBe('0.999');
    s = (await behavior.handle(structuredClone(s), { type: 'revert', key: 'b' }, t0)).state!;
    expect(s.status).toBe('partial_paid');
    expect(s.completion_rate).toBeUndefined();
    s = (await behavior.handle(structuredClone(s), credit('d', '700000'), new Date(t0.getTime() + 1000))).state!;
    expect(s.completion_rate?.rate).toBe('0.5');
    expect(calls).toEqual(['USDC', 'USDC']);
  });

  it('completes without a rate when none is known or the lookup fails', async () => {
    const none = await paymentSessionBehaviorWithRates(async () => null).handle(base(), credit('a', '1000000'), t0);
    expect(none.state!.status).toBe('completed');
    expect(none.state!.completion_rate).toBeUndefined();
    const failing = await paymentSessionBehaviorWithRates(async () => {
      throw new Error('store down');
    }).handle(base(), credit('a', '1000000'), t0);
    expect(failing.state!.status).toBe('completed');
    expect(failing.state!.completion_rate).toBeUndefined();
  });
});
