/**
 * One typed configuration object, read from the environment with defaults (DESIGN.md: Configuration
 * contract). The names are a contract: black-box tests drive the service through them.
 */
import { resolve } from 'node:path';
import { buildRails, type Rail } from './rails.ts';

export interface ChainNetworkConfig {
  rpcUrl: string;
  /** Ethereum: USDC contract address; Solana: USDC mint */
  usdcToken: string;
  /** Ethereum: block depth; Solana: commitment level */
  confirmations: number;
  commitment: 'processed' | 'confirmed' | 'finalized';
}

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  storeUrl: string;
  transporter: string;
  /** Moleculer namespace: nodes talk only to nodes of the same namespace */
  namespace: string;
  nodeId: string | undefined;
  /** null: every service */
  services: string[] | null;
  smtpUrl: string;
  mailFrom: string;
  trustedEmailDomains: string[];
  trustedEmails: string[];
  powDifficulty: number;
  webhookAllowPrivate: boolean;
  /** webhook delivery: scanner period, per-attempt time-out, first retry delay (the schedule scales with it) */
  webhooks: { scanIntervalMs: number; timeoutMs: number; retryBaseMs: number };
  /** the events API: sequencer and stream poll period, longest life of one SSE connection, keep-alive comment period */
  events: { pollIntervalMs: number; streamMaxMs: number; heartbeatMs: number };
  metricsPort: number | null;
  logLevel: string;
  rateLimitPerMinute: number;
  /** requests per minute per client (hashed IP) on each public onboarding step and demo sessions */
  publicRateLimitPerMinute: number;
  /** per-merchant caps in the rail's token units (decimal strings); null means no cap */
  sessionAmountLimit: string | null;
  dailyVolumeLimit: string | null;
  /** period of the payment-session expiry scanner (SESSION_SCAN_INTERVAL_MS) */
  sessionScanIntervalMs: number;
  /** chain listeners: poll period (CHAIN_POLL_INTERVAL_MS) and listener lease TTL (CHAIN_LEASE_TTL_MS) */
  listeners: { pollIntervalMs: number; leaseTtlMs: number };
  bodyLimit: string;
  chains: {
    ethereum: { testnet: ChainNetworkConfig; mainnet: ChainNetworkConfig };
    solana: { testnet: ChainNetworkConfig; mainnet: ChainNetworkConfig };
  };
  rails: Rail[];
}

type Env = Record<string, string | undefined>;

const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

function int(env: Env, name: string, dflt: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}`);
  return n;
}

function bool(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());
}

function decimalOrNull(env: Env, name: string): string | null {
  const v = env[name]?.trim();
  if (!v) return null;
  if (!/^\d+(\.\d+)?$/.test(v)) throw new Error(`${name} must be a decimal number of token units`);
  return v;
}

/** mainnet defaults to finalized: a deposit that counts must not be rolled back with its slot */
function commitment(v: string | undefined, network: 'TESTNET' | 'MAINNET'): ChainNetworkConfig['commitment'] {
  const c = (v || (network === 'MAINNET' ? 'finalized' : 'confirmed')).trim();
  if (c !== 'processed' && c !== 'confirmed' && c !== 'finalized') throw new Error('SOLANA_*_COMMITMENT must be processed, confirmed or finalized');
  return c;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000);
  const dataDir = resolve(env.DATA_DIR || './data');
  const chain = (prefix: 'ETHEREUM' | 'SOLANA', network: 'TESTNET' | 'MAINNET'): ChainNetworkConfig => ({
    rpcUrl: env[`${prefix}_${network}_RPC_URL`] ?? '',
    usdcToken: env[`${prefix}_${network}_${prefix === 'ETHEREUM' ? 'USDC_ADDRESS' : 'USDC_MINT'}`] ?? '',
    confirmations: int(env, `${prefix}_${network}_CONFIRMATIONS`, network === 'MAINNET' ? 12 : 2),
    commitment: commitment(env[`${prefix}_${network}_COMMITMENT`], network),
  });
  const chains = {
    ethereum: { testnet: chain('ETHEREUM', 'TESTNET'), mainnet: chain('ETHEREUM', 'MAINNET') },
    solana: { testnet: chain('SOLANA', 'TESTNET'), mainnet: chain('SOLANA', 'MAINNET') },
  };
  const services = list(env.SERVICES);
  return {
    port,
    host: env.HOST || '0.0.0.0',
    publicUrl: (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    dataDir,
    storeUrl: env.STORE_URL || `sqlite:${resolve(dataDir, 'service.db')}`,
    transporter: env.TRANSPORTER ?? '',
    namespace: env.NAMESPACE || 'payments',
    nodeId: env.NODE_ID || undefined,
    services: services.length === 0 || services.includes('all') ? null : services,
    smtpUrl: env.SMTP_URL ?? '',
    mailFrom: env.MAIL_FROM || 'Payment Service <no-reply@localhost>',
    trustedEmailDomains: list(env.TRUSTED_EMAIL_DOMAINS),
    trustedEmails: list(env.TRUSTED_EMAILS),
    powDifficulty: int(env, 'POW_DIFFICULTY', 20),
    webhookAllowPrivate: bool(env.WEBHOOK_ALLOW_PRIVATE),
    webhooks: {
      scanIntervalMs: int(env, 'WEBHOOK_SCAN_INTERVAL_MS', 1000, 10),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
      retryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, 10),
    },
    events: {
      pollIntervalMs: int(env, 'EVENTS_POLL_INTERVAL_MS', 500, 10),
      streamMaxMs: int(env, 'EVENTS_STREAM_MAX_MS', 30 * 60_000, 1000),
      heartbeatMs: int(env, 'EVENTS_HEARTBEAT_MS', 15_000, 100),
    },
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0) : null,
    logLevel: env.LOG_LEVEL || 'info',
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 60, 1),
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 30, 1),
    sessionAmountLimit: decimalOrNull(env, 'SESSION_AMOUNT_LIMIT'),
    dailyVolumeLimit: decimalOrNull(env, 'DAILY_VOLUME_LIMIT'),
    sessionScanIntervalMs: int(env, 'SESSION_SCAN_INTERVAL_MS', 1000, 10),
    listeners: {
      pollIntervalMs: int(env, 'CHAIN_POLL_INTERVAL_MS', 3000, 10),
      leaseTtlMs: int(env, 'CHAIN_LEASE_TTL_MS', 15_000, 100),
    },
    bodyLimit: env.BODY_LIMIT || '64kb',
    chains,
    rails: buildRails(chains),
  };
}
