/**
 * Spot-rate configuration (README "Spot rates"): the ordered sources per pair and what each source needs.
 *
 *   RATE_SOURCES           `*=chainlink,http,static,peg` (default); per pair `ETH:USD=chainlink,http;*=http,static`
 *                          (`peg`: a stablecoin's peg, lib/rates/peg.ts: USDC:USD = 1)
 *   RATES_CHAINLINK_FEEDS  `ETH:USD=ethereum:mainnet:0x…[:max_age_s];…` (AggregatorV3 contracts; default: the
 *                          Ethereum mainnet ETH/USD, USDC/USD and SOL/USD feeds, used when that chain's RPC is set)
 *   RATES_HTTP_URL         base URL of a CoinGecko-compatible API (`/simple/price`); empty: no HTTP source
 *   RATES_HTTP_IDS         token → API id, `USDC=usd-coin,ETH=ethereum,SOL=solana` (default)
 *   RATES_HTTP_API_KEY     sent as `x-cg-pro-api-key` when set (never logged)
 *   RATES_STATIC           `USDC:USD=1,…` a fixed table for sandbox; empty by default (no invented numbers)
 *   RATES_CACHE_TTL        seconds (or 15m…) a fetched rate is reused, shared by all nodes through the store: 60
 *   RATES_MAX_AGE          older than this (by the source's own timestamp) a rate is served with stale: true: 3600
 *   RATES_REFUSE_AGE       older than this a value is refused, and a Chainlink round unless its feed says
 *                          otherwise: 90000 (25 h: the USDC/USD feed's 24 h heartbeat plus margin)
 */
import type { Env } from './env.ts';
import { parseDuration } from '../lib/core/duration.ts';
import { ConfigError } from './errors.ts';

export type RateSourceName = 'chainlink' | 'http' | 'static' | 'peg';
export const RATE_SOURCE_NAMES: RateSourceName[] = ['chainlink', 'http', 'static', 'peg'];
export const DEFAULT_RATE_SOURCES = '*=chainlink,http,static,peg';

export interface ChainlinkFeed {
  chain: 'ethereum';
  network: 'testnet' | 'mainnet';
  address: string;
  maxAgeS: number | null;
}

export interface RatesConfig {
  /** pair `BASE:QUOTE` or `*` → sources in order */
  sources: Record<string, RateSourceName[]>;
  chainlinkFeeds: Record<string, ChainlinkFeed>;
  httpUrl: string;
  httpIds: Record<string, string>;
  httpApiKey: string;
  static: Record<string, string>;
  cacheTtlMs: number;
  maxAgeMs: number;
  refuseAgeMs: number;
}

const DEFAULT_FEEDS = [
  'ETH:USD=ethereum:mainnet:0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419',
  'USDC:USD=ethereum:mainnet:0x8fFfFfd4AfB6115b954Bd326cbe7B4BA576818f6',
  'SOL:USD=ethereum:mainnet:0x4ffC43a60e009B551865A93d232E33Fce9f01507',
].join(';');

const PAIR = /^([A-Z0-9]{2,10}):([A-Z]{3,5})$/;

/** `A=x;B=y` (or commas between entries whose values have no commas) → entries, names upper-cased. */
function entries(raw: string, name: string, expected: string, sep = /;/): Array<[string, string]> {
  return raw
    .split(sep)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((e) => {
      const i = e.indexOf('=');
      if (i <= 0) throw new ConfigError(name, raw, `must be ${expected} ('${e}' is not KEY=VALUE)`);
      return [e.slice(0, i).trim().toUpperCase(), e.slice(i + 1).trim()];
    });
}

function pair(env: Env, key: string, name: string, star = false): string {
  if (star && key === '*') return key;
  if (!PAIR.test(key))
    throw new ConfigError(name, env[name], `names pairs like USDC:USD${star ? ' (or * for every other pair)' : ''}; '${key}' is not one`);
  return key;
}

/** seconds, or a duration such as 90s, 15m, 1h, 2d */
function seconds(env: Env, name: string, dflt: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return dflt * 1000;
  const ms = /^\d+(\.\d+)?$/.test(raw) ? Math.round(Number(raw) * 1000) : parseDuration(raw);
  if (ms === null || !(ms > 0)) throw new ConfigError(name, raw, 'must be a positive number of seconds or a duration such as 15m');
  return ms;
}

export function loadRatesConfig(env: Env): RatesConfig {
  const sources: Record<string, RateSourceName[]> = {};
  for (const [k, v] of entries(
    env.RATE_SOURCES || DEFAULT_RATE_SOURCES,
    'RATE_SOURCES',
    `<pair or *>=<sources>;…, e.g. ${DEFAULT_RATE_SOURCES} or ETH:USD=chainlink,http;*=static,peg`,
  )) {
    const list = v
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    for (const s of list)
      if (!RATE_SOURCE_NAMES.includes(s as RateSourceName))
        throw new ConfigError('RATE_SOURCES', env.RATE_SOURCES, `names sources chainlink, http, static or peg; '${s}' is not one`);
    sources[pair(env, k, 'RATE_SOURCES', true)] = list as RateSourceName[];
  }
  const chainlinkFeeds: Record<string, ChainlinkFeed> = {};
  for (const [k, v] of entries(
    env.RATES_CHAINLINK_FEEDS ?? DEFAULT_FEEDS,
    'RATES_CHAINLINK_FEEDS',
    'PAIR=ethereum:<network>:<address>[:max_age_s];…',
  )) {
    const [chain, network, address, maxAge] = v.split(':');
    if (chain !== 'ethereum' || (network !== 'testnet' && network !== 'mainnet') || !/^0x[0-9a-fA-F]{40}$/.test(address ?? '')) {
      throw new ConfigError(
        'RATES_CHAINLINK_FEEDS',
        env.RATES_CHAINLINK_FEEDS,
        `gives each pair ethereum:<testnet|mainnet>:<0x contract address>[:max_age_seconds]; '${v}' is not that`,
      );
    }
    const maxAgeS = maxAge === undefined || maxAge === '' ? null : Number(maxAge);
    if (maxAgeS !== null && !(Number.isFinite(maxAgeS) && maxAgeS > 0))
      throw new ConfigError('RATES_CHAINLINK_FEEDS', env.RATES_CHAINLINK_FEEDS, `max age of ${k} must be positive seconds`);
    chainlinkFeeds[pair(env, k, 'RATES_CHAINLINK_FEEDS')] = { chain, network, address, maxAgeS };
  }
  const httpIds: Record<string, string> = {};
  for (const [k, v] of entries(env.RATES_HTTP_IDS || 'USDC=usd-coin,ETH=ethereum,SOL=solana', 'RATES_HTTP_IDS', 'TOKEN=<api id>,…', /[;,]/))
    httpIds[k] = v;
  const table: Record<string, string> = {};
  for (const [k, v] of entries(env.RATES_STATIC ?? '', 'RATES_STATIC', 'PAIR=<rate>,…, e.g. USDC:USD=1,ETH:USD=3000', /[;,]/)) {
    if (!/^\d+(\.\d+)?$/.test(v) || /^0+(\.0+)?$/.test(v))
      throw new ConfigError('RATES_STATIC', env.RATES_STATIC, `the rate of ${k} must be a positive decimal number`);
    table[pair(env, k, 'RATES_STATIC')] = v;
  }
  const httpUrl = (env.RATES_HTTP_URL ?? '').trim().replace(/\/+$/, '');
  if (httpUrl && !/^https?:\/\/[^/\s]+/.test(httpUrl)) throw new ConfigError('RATES_HTTP_URL', httpUrl, 'must be an http(s) URL');
  return {
    sources,
    chainlinkFeeds,
    httpUrl,
    httpIds,
    httpApiKey: env.RATES_HTTP_API_KEY ?? '',
    static: table,
    cacheTtlMs: seconds(env, 'RATES_CACHE_TTL', 60),
    maxAgeMs: seconds(env, 'RATES_MAX_AGE', 3600),
    refuseAgeMs: seconds(env, 'RATES_REFUSE_AGE', 90_000),
  };
}

/** The sources of a pair, in order. */
export const sourcesFor = (c: RatesConfig, pairKey: string): RateSourceName[] => c.sources[pairKey] ?? c.sources['*'] ?? [];
