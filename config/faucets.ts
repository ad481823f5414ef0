/**
 * Testnet faucet configuration (README "Testnet faucets").
 *
 *   FAUCETS                 JSON array replacing the default list of public faucets (fields of FaucetEntry)
 *   FAUCET_DRIP             `auto` (default): a local drip on rails whose RPC URL is a loopback address; `off`
 *   FAUCET_DRIP_AMOUNTS     token units per drip, `ETH=1,USDC=100,SOL=1` (default)
 *   FAUCET_DRIP_INTERVAL    one drip per address, chain and token in this window: `10m` (default)
 *   FAUCET_DRIP_PER_MERCHANT drips per merchant in that window: 20 (default)
 */
import type { Env } from './env.ts';
import { parseDuration } from '../lib/core/duration.ts';
import { ConfigError } from './errors.ts';

export interface FaucetEntry {
  chain: string;
  network: string;
  token: string;
  name: string;
  url: string;
  /** what one request gives, as the faucet states it; null when the faucet's operator sets it */
  amount: string | null;
  /** how often one may ask; null when the faucet's operator sets it */
  interval: string | null;
  notes: string;
}

export interface FaucetsConfig {
  list: FaucetEntry[];
  drip: 'auto' | 'off';
  dripAmounts: Record<string, string>;
  dripIntervalMs: number;
  dripPerMerchant: number;
}

/** The public faucets for the testnets the rails default to (Sepolia, Solana devnet). */
export const DEFAULT_FAUCETS: FaucetEntry[] = [
  {
    chain: 'ethereum',
    network: 'testnet',
    token: 'ETH',
    name: 'Google Cloud Web3 faucet (Sepolia)',
    url: 'https://cloud.google.com/application/web3/faucet/ethereum/sepolia',
    amount: null,
    interval: null,
    notes: 'Sepolia ETH for gas. Limits are set by the faucet operator; a Google account is required.',
  },
  {
    chain: 'ethereum',
    network: 'testnet',
    token: 'USDC',
    name: 'Circle USDC faucet',
    url: 'https://faucet.circle.com',
    amount: null,
    interval: null,
    notes: 'Choose Ethereum Sepolia. Test USDC only; limits are set by Circle.',
  },
  {
    chain: 'solana',
    network: 'testnet',
    token: 'USDC',
    name: 'Circle USDC faucet',
    url: 'https://faucet.circle.com',
    amount: null,
    interval: null,
    notes: 'Choose Solana Devnet. Test USDC only; limits are set by Circle.',
  },
  {
    chain: 'solana',
    network: 'testnet',
    token: 'SOL',
    name: 'Solana devnet faucet',
    url: 'https://faucet.solana.com',
    amount: null,
    interval: null,
    notes: 'Devnet SOL (also `solana airdrop 1 <address> --url devnet`). Limits are set by the Solana Foundation.',
  },
];

function parseList(raw: string): FaucetEntry[] {
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw new ConfigError('FAUCETS', raw, 'must be a JSON array of {chain, network, token, name, url, amount, interval, notes}');
  }
  if (!Array.isArray(list)) throw new ConfigError('FAUCETS', raw, 'must be a JSON array');
  return list.map((e, i) => {
    const f = e as Record<string, unknown>;
    for (const k of ['chain', 'network', 'token', 'name', 'url']) {
      if (typeof f[k] !== 'string' || !f[k]) throw new ConfigError('FAUCETS', raw, `entry ${i}: ${k} must be a non-empty string`);
    }
    if (!/^https?:\/\//.test(f.url as string)) throw new ConfigError('FAUCETS', raw, `entry ${i}: url must be an http(s) URL`);
    const opt = (k: string) => (f[k] === undefined || f[k] === null ? null : String(f[k]));
    return {
      chain: f.chain as string,
      network: f.network as string,
      token: (f.token as string).toUpperCase(),
      name: f.name as string,
      url: f.url as string,
      amount: opt('amount'),
      interval: opt('interval'),
      notes: typeof f.notes === 'string' ? f.notes : '',
    };
  });
}

export function loadFaucetsConfig(env: Env): FaucetsConfig {
  const drip = (env.FAUCET_DRIP || 'auto').trim().toLowerCase();
  if (drip !== 'auto' && drip !== 'off') throw new ConfigError('FAUCET_DRIP', env.FAUCET_DRIP, 'must be auto or off');
  const dripAmounts: Record<string, string> = {};
  for (const e of (env.FAUCET_DRIP_AMOUNTS || 'ETH=1,USDC=100,SOL=1')
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [k, v] = e.split('=').map((s) => s?.trim());
    if (!k || !v || !/^\d+(\.\d+)?$/.test(v) || /^0+(\.0+)?$/.test(v))
      throw new ConfigError('FAUCET_DRIP_AMOUNTS', env.FAUCET_DRIP_AMOUNTS, `must be TOKEN=<positive token units>,…; '${e}' is not`);
    dripAmounts[k.toUpperCase()] = v;
  }
  const interval = parseDuration(env.FAUCET_DRIP_INTERVAL || '10m');
  if (interval === null || interval <= 0)
    throw new ConfigError('FAUCET_DRIP_INTERVAL', env.FAUCET_DRIP_INTERVAL, 'must be a duration such as 10m');
  const perMerchant = Number(env.FAUCET_DRIP_PER_MERCHANT || 20);
  if (!Number.isInteger(perMerchant) || perMerchant < 1)
    throw new ConfigError('FAUCET_DRIP_PER_MERCHANT', env.FAUCET_DRIP_PER_MERCHANT, 'must be a whole number >= 1');
  return {
    list: env.FAUCETS ? parseList(env.FAUCETS) : DEFAULT_FAUCETS,
    drip,
    dripAmounts,
    dripIntervalMs: interval,
    dripPerMerchant: perMerchant,
  };
}
