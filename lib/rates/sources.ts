/**
 * The rate sources. Each returns an exact decimal string (never a float) and the source's own timestamp,
 * or throws a SourceRefusal saying why it has no usable value.
 * - chainlink: AggregatorV3 `latestRoundData` over the chain's RPC; `decimals()` from the contract; a round
 *   with answer <= 0, no updatedAt, or older than the feed's staleness limit is refused.
 * - http: a CoinGecko-compatible `/simple/price`; the number is read from the JSON text itself, so digits a
 *   double cannot hold are kept.
 * - static: the configured table (sandbox); as of now, by configuration.
 */
import { Contract } from 'ethers';
import { decimalText, fromSubunits } from '../core/money.ts';
import { ethProvider } from '../chains/clients.ts';
import type { ChainlinkFeed } from '../../config/rates.ts';

export interface SourceValue {
  rate: string;
  as_of: Date;
}

export class SourceRefusal extends Error {}

/** clock skew tolerated between a feed's round timestamp and ours */
const FUTURE_SKEW_MS = 5 * 60_000;

const AGGREGATOR_V3_ABI = [
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
];

/** A positive decimal string, normalized (no exponent, no trailing zeros). */
export function positiveDecimal(text: string): string {
  let d: string;
  try {
    d = decimalText(text);
  } catch {
    throw new SourceRefusal(`not a decimal number: ${text.slice(0, 40)}`);
  }
  if (d.startsWith('-') || /^0(\.0*)?$/.test(d)) throw new SourceRefusal(`answer ${d} is not positive`);
  return d;
}

export async function chainlinkRate(rpcUrl: string, feed: ChainlinkFeed, now: Date, maxAgeMs: number): Promise<SourceValue> {
  const provider = await ethProvider(rpcUrl, 10_000);
  const aggregator = new Contract(feed.address, AGGREGATOR_V3_ABI, provider);
  const [decimals, round] = await Promise.all([
    aggregator.getFunction('decimals')() as Promise<bigint>,
    aggregator.getFunction('latestRoundData')() as Promise<[bigint, bigint, bigint, bigint, bigint]>,
  ]);
  const [, answer, , updatedAt] = round;
  if (answer <= 0n) throw new SourceRefusal(`answer ${answer} is not positive`);
  if (updatedAt === 0n) throw new SourceRefusal('the latest round is not complete');
  const asOf = new Date(Number(updatedAt) * 1000);
  // a round dated ahead of us is a broken feed (or a broken clock): never served as the freshest value
  if (asOf.getTime() - now.getTime() > FUTURE_SKEW_MS)
    throw new SourceRefusal(`the latest round is dated ${asOf.toISOString()}, in the future`);
  const limit = feed.maxAgeS !== null ? feed.maxAgeS * 1000 : maxAgeMs;
  if (now.getTime() - asOf.getTime() > limit)
    throw new SourceRefusal(`the latest round is from ${asOf.toISOString()}, older than ${limit / 1000} s`);
  return { rate: fromSubunits(answer, Number(decimals)), as_of: asOf > now ? now : asOf };
}

/** JSON.parse keeping every number as its source text (Node 22+: the reviver's context.source). */
function parseExact(text: string): unknown {
  return JSON.parse(text, (_k, v, ctx?: { source?: string }) => (typeof v === 'number' ? (ctx?.source ?? String(v)) : v));
}

export async function httpRate(baseUrl: string, id: string, quote: string, apiKey: string, now: Date): Promise<SourceValue> {
  const vs = quote.toLowerCase();
  const url = `${baseUrl}/simple/price?ids=${encodeURIComponent(id)}&vs_currencies=${encodeURIComponent(vs)}&include_last_updated_at=true&precision=full`;
  const res = await fetch(url, {
    headers: { accept: 'application/json', ...(apiKey ? { 'x-cg-pro-api-key': apiKey } : {}) },
    signal: AbortSignal.timeout(10_000),
    redirect: 'error',
  });
  if (!res.ok) throw new SourceRefusal(`HTTP ${res.status}`);
  const body = parseExact(await res.text()) as Record<string, Record<string, string> | undefined>;
  const entry = body?.[id];
  const value = entry?.[vs];
  if (typeof value !== 'string') throw new SourceRefusal(`no ${vs} price for ${id}`);
  const updated = entry?.last_updated_at;
  const asOf = typeof updated === 'string' && /^\d+$/.test(updated) ? new Date(Number(updated) * 1000) : now;
  return { rate: positiveDecimal(value), as_of: asOf > now ? now : asOf };
}
