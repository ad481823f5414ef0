/**
 * One typed configuration object, read from the environment with defaults (DESIGN.md: Configuration
 * contract). The names are a contract: black-box tests drive the service through them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Mnemonic } from 'ethers';
import { resolve } from 'node:path';
import { ConfigError } from './errors.ts';
import { buildRails, type Rail } from './rails.ts';
import { loadRatesConfig, type RatesConfig } from './rates.ts';
import { loadFaucetsConfig, type FaucetsConfig } from './faucets.ts';
import {
  DOMAIN,
  LOG_LEVELS,
  bodyLimit,
  bool,
  checkedList,
  decimalOrNull,
  duration,
  hasScheme,
  host,
  httpUrl,
  int,
  isCidr,
  list,
  oneOf,
  railAmounts,
  rpcUrl,
  smtpUrl,
  tokenAddress,
  type Env,
  type WindowThreshold,
  windowThreshold,
  word,
} from './env.ts';

export type { WindowThreshold } from './env.ts';

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
  /** PostgreSQL: connections in each node's pool (STORE_POOL_SIZE) */
  storePoolSize: number;
  transporter: string;
  /** the cluster transport: NATS credentials and TLS, and the key that seals every packet between nodes */
  cluster: ClusterConfig;
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
  /** public registration: per-email and per-domain intents, wrong codes per email (lib/onboarding/limits.ts) */
  registration: { intentsPerEmailPerHour: number; intentsPerDomainPerHour: number; wrongCodesPerEmailPerDay: number };
  /** addresses or CIDRs of load balancers whose X-Forwarded-For names the client (TRUSTED_PROXIES) */
  trustedProxies: string[];
  webhookAllowPrivate: boolean;
  /** webhook delivery: scanner period, per-attempt time-out, first retry delay (the schedule scales with it) */
  webhooks: { scanIntervalMs: number; timeoutMs: number; retryBaseMs: number };
  /** the events API: sequencer and stream poll period, longest life of one SSE connection, keep-alive comment period */
  events: { pollIntervalMs: number; streamMaxMs: number; heartbeatMs: number };
  metricsPort: number | null;
  /** METRICS_TOKEN: bearer token /metrics requires; unset: only direct local callers on the API port */
  metricsToken: string;
  logLevel: string;
  rateLimitPerMinute: number;
  /** requests per minute per client (hashed IP) on each public onboarding step and demo sessions */
  publicRateLimitPerMinute: number;
  /** per-merchant caps in the rail's token units (decimal strings); null means no cap */
  sessionAmountLimit: string | null;
  dailyVolumeLimit: string | null;
  /** payout caps in the rail's token units (PAYOUT_AMOUNT_LIMIT per payout, DAILY_PAYOUT_LIMIT per merchant, rail and UTC day); null: no cap */
  payoutAmountLimit: string | null;
  dailyPayoutLimit: string | null;
  /** period of the payment-session expiry scanner (SESSION_SCAN_INTERVAL_MS) */
  sessionScanIntervalMs: number;
  /** chain listeners: poll period (CHAIN_POLL_INTERVAL_MS) and listener lease TTL (CHAIN_LEASE_TTL_MS) */
  listeners: { pollIntervalMs: number; leaseTtlMs: number };
  bodyLimit: string;
  /** how long an API node may use what it read to authenticate a key (AUTH_CACHE_TTL_MS; 0: no cache) */
  authCacheTtlMs: number;
  /** operational alerts (lib/ops/alerts): thresholds, dedup, destinations */
  alerts: AlertsConfig;
  /** audit hash chains: how often each node seals new audit rows (AUDIT_SEAL_INTERVAL_MS) */
  audit: { sealIntervalMs: number };
  /** money out (lib/chains/broadcast, gas-wallet, sweeps): see README "Sweeps, payouts and gas wallets" */
  moneyOut: {
    /** GAS_WALLET_MIN_ETH / GAS_WALLET_MIN_SOL: below this (token units) a gas wallet is low */
    gasWalletMin: { ethereum: string; solana: string };
    /** BROADCAST_POLL_INTERVAL_MS: how often pending transactions are checked and sweeps looked for */
    pollIntervalMs: number;
    /** BROADCAST_REBROADCAST_MS: an unconfirmed transaction's same bytes are sent again after this */
    rebroadcastMs: number;
    /** BROADCAST_BUMP_AFTER_MS: an Ethereum transaction still not mined is replaced (same nonce, +25% gas price) */
    bumpAfterMs: number;
  };
  /** reconciliation of the books with the chain (lib/treasury/reconcile, docs/money-out.md) */
  reconcile: {
    /** RECONCILE_INTERVAL_MS: period of the continuous scanner (0: it does not run) */
    intervalMs: number;
    /** RECONCILE_ADDRESSES_PER_TICK: wallets compared per tick besides the ones new movements touched */
    addressesPerTick: number;
    /** RECONCILE_BLOCKS_PER_TICK: Ethereum blocks read per tick at most for transfers out */
    blocksPerTick: number;
  };
  /** agent spends and x402 (README "Agent wallets and x402") */
  agents: {
    /** X402_SETTLE_TIMEOUT_MS: how long a redeem waits for its on-chain settlement before answering pending */
    settleTimeoutMs: number;
    /** AGENTS_SCAN_INTERVAL_MS: period of the scanners that finish interrupted spends and settlements */
    scanIntervalMs: number;
    /**
     * X402_MIN_AMOUNTS: the smallest x402 challenge per rail, `<chain>:<network>:<token>=<token units>` comma
     * separated (a challenge must bring more than settling it costs); never below the rail's min_amount
     */
    x402MinAmounts: Record<string, string>;
  };
  chains: {
    ethereum: { testnet: ChainNetworkConfig; mainnet: ChainNetworkConfig };
    solana: { testnet: ChainNetworkConfig; mainnet: ChainNetworkConfig };
  };
  rails: Rail[];
  /** spot rates (config/rates.ts): RATE_SOURCES, RATES_* */
  rates: RatesConfig;
  /** testnet faucets (config/faucets.ts): FAUCETS, FAUCET_DRIP* */
  faucets: FaucetsConfig;
}

/** "more than `count` in `windowMs`" */

export interface AlertsConfig {
  /** successful registrations per source or agent (ALERT_REGISTRATION_SPIKE, default 10/10m) */
  registrations: WindowThreshold;
  /** failed registrations per source (ALERT_REGISTRATION_FAILED, default 5/5m) */
  failedRegistrations: WindowThreshold;
  /** failed webhook attempts per merchant (ALERT_WEBHOOK_FAILURES, default 20/10m) */
  webhookFailures: WindowThreshold;
  /** failure rate in percent per merchant (ALERT_WEBHOOK_FAILURE_RATE, default 50/15m) */
  webhookFailureRate: WindowThreshold;
  /** attempts in the rate window before the rate counts (ALERT_WEBHOOK_RATE_MIN_ATTEMPTS, default 10) */
  webhookRateMinAttempts: number;
  /** simulate calls per merchant or session (ALERT_SIMULATE_CALLS, default 10/10m) */
  simulateCalls: WindowThreshold;
  /** window of the "any" rules (non-demo simulate, limit violations) for dedup (ALERT_ANY_WINDOW, 10m) */
  anyWindowMs: number;
  /** an open alert is sent again no sooner than this (ALERT_RENOTIFY_INTERVAL, default 1h) */
  renotifyMs: number;
  webhookUrl: string;
  webhookSecret: string;
  alertmanagerUrl: string;
  /** period of the alert delivery scanner (ALERT_SCAN_INTERVAL_MS) */
  scanIntervalMs: number;
  timeoutMs: number;
}

export interface ClusterConfig {
  /** CLUSTER_SECRET; empty: the sealing key is derived from the master key every node shares */
  secret: string;
  natsUser: string;
  natsPassword: string;
  natsToken: string;
  /** PEM file paths; a CA alone verifies the server, cert+key authenticate this node (mutual TLS) */
  tls: { caFile: string; certFile: string; keyFile: string } | null;
}

function alertsConfig(env: Env): AlertsConfig {
  const webhookUrl = httpUrl(env, 'ALERT_WEBHOOK_URL');
  const webhookSecret = env.ALERT_WEBHOOK_SECRET ?? '';
  if (webhookUrl && webhookSecret.length < 16)
    throw new ConfigError(
      'ALERT_WEBHOOK_SECRET',
      webhookSecret,
      'must be set, at least 16 characters, when ALERT_WEBHOOK_URL is: alerts sent there are signed with it',
    );
  const rate = windowThreshold(env, 'ALERT_WEBHOOK_FAILURE_RATE', '50/15m');
  if (rate.count > 100)
    throw new ConfigError(
      'ALERT_WEBHOOK_FAILURE_RATE',
      env.ALERT_WEBHOOK_FAILURE_RATE,
      'is a percentage (0 to 100) per window, e.g. 50/15m',
    );
  return {
    registrations: windowThreshold(env, 'ALERT_REGISTRATION_SPIKE', '10/10m'),
    failedRegistrations: windowThreshold(env, 'ALERT_REGISTRATION_FAILED', '5/5m'),
    webhookFailures: windowThreshold(env, 'ALERT_WEBHOOK_FAILURES', '20/10m'),
    webhookFailureRate: rate,
    webhookRateMinAttempts: int(env, 'ALERT_WEBHOOK_RATE_MIN_ATTEMPTS', 10, 1),
    simulateCalls: windowThreshold(env, 'ALERT_SIMULATE_CALLS', '10/10m'),
    anyWindowMs: duration(env, 'ALERT_ANY_WINDOW', '10m'),
    renotifyMs: duration(env, 'ALERT_RENOTIFY_INTERVAL', '1h'),
    webhookUrl,
    webhookSecret,
    alertmanagerUrl: httpUrl(env, 'ALERTMANAGER_URL').replace(/\/+$/, ''),
    scanIntervalMs: int(env, 'ALERT_SCAN_INTERVAL_MS', 2000, 10),
    timeoutMs: int(env, 'ALERT_TIMEOUT_MS', 10_000, 100),
  };
}

/** How long the previous API key or webhook secret keeps working after a rotation (the spec's 24 hours). */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/**
 * Docker/Kubernetes secrets: for each secret variable NAME, NAME_FILE names a file holding its value.
 * Applied to the process environment at start-up, before anything reads it.
 */
export const SECRET_VARIABLES = [
  'MASTER_KEY',
  'SEED_MNEMONIC',
  'CLUSTER_SECRET',
  'NATS_PASSWORD',
  'NATS_TOKEN',
  'SMTP_URL',
  'STORE_URL',
  'METRICS_TOKEN',
  'ALERT_WEBHOOK_SECRET',
] as const;

export function applySecretFiles(env: Env = process.env): void {
  for (const name of SECRET_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (!file || (env[name] ?? '') !== '') continue;
    try {
      env[name] = readFileSync(file, 'utf8').trim();
    } catch (e) {
      throw new ConfigError(
        `${name}_FILE`,
        file,
        `must name a readable file holding ${name} (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
    }
  }
}

/** The cluster's NATS TLS files: each named one must exist; a certificate needs its key. */
function natsTls(env: Env): ClusterConfig['tls'] {
  const ca = env.NATS_TLS_CA_FILE ?? '';
  const cert = env.NATS_TLS_CERT_FILE ?? '';
  const key = env.NATS_TLS_KEY_FILE ?? '';
  for (const [name, file] of [
    ['NATS_TLS_CA_FILE', ca],
    ['NATS_TLS_CERT_FILE', cert],
    ['NATS_TLS_KEY_FILE', key],
  ] as const)
    if (file && !existsSync(file)) throw new ConfigError(name, file, 'must name an existing PEM file');
  if (cert && !key) throw new ConfigError('NATS_TLS_KEY_FILE', key, 'must name the private key of NATS_TLS_CERT_FILE');
  if (key && !cert) throw new ConfigError('NATS_TLS_CERT_FILE', cert, 'must name the certificate of NATS_TLS_KEY_FILE');
  return ca || cert ? { caFile: ca, certFile: cert, keyFile: key } : null;
}

/** Empty (one process), or the transporter URL(s) of a cluster: nats://host:4222[,nats://…] */
function transporterUrl(env: Env): string {
  const v = (env.TRANSPORTER ?? '').trim();
  if (!v) return '';
  if (!v.split(',').every((u) => hasScheme(u.trim(), /^[a-z][a-z0-9+.-]*:$/)))
    throw new ConfigError('TRANSPORTER', v, 'must be empty (one process) or nats://host:4222 (comma-separated for several servers)');
  return v;
}

/** CLUSTER_SECRET: empty (derived from the master key), or a secret long enough not to be guessed. */
function clusterSecret(env: Env): string {
  const v = env.CLUSTER_SECRET ?? '';
  if (v && v.length < 16)
    throw new ConfigError('CLUSTER_SECRET', v, 'must be at least 16 characters (e.g. `openssl rand -hex 32`), or unset');
  return v;
}

/** MASTER_KEY: 64 hex characters, or unset (the embedded default keeps one in DATA_DIR/master.key) */
/** SEED_MNEMONIC: a valid BIP-39 English phrase, or unset (testnet: one is created in DATA_DIR/seed) */
function seedMnemonic(env: Env): void {
  const v = env.SEED_MNEMONIC;
  if (v && v.trim() && !Mnemonic.isValidMnemonic(v.trim().normalize('NFKD').split(/\s+/).join(' ')))
    throw new ConfigError('SEED_MNEMONIC', v, 'must be a valid BIP-39 English mnemonic (12 to 24 words)');
}

function masterKey(env: Env): void {
  const v = env.MASTER_KEY;
  if (v && !/^[0-9a-fA-F]{64}$/.test(v))
    throw new ConfigError('MASTER_KEY', v, 'must be 64 hex characters (32 bytes), e.g. from `openssl rand -hex 32`');
}

/** mainnet defaults to finalized: a deposit that counts must not be rolled back with its slot */
function commitment(env: Env, name: string, network: 'TESTNET' | 'MAINNET'): ChainNetworkConfig['commitment'] {
  return oneOf(env, name, ['processed', 'confirmed', 'finalized'] as const, network === 'MAINNET' ? 'finalized' : 'confirmed');
}

function storeUrl(env: Env, dataDir: string): string {
  const url = env.STORE_URL || `sqlite:${resolve(dataDir, 'service.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/|mongodb(\+srv)?:\/\/)/.test(url))
    throw new ConfigError('STORE_URL', url, 'must be sqlite:<path>, postgres://user:password@host:port/database or mongodb://…');
  if (/^postgres(ql)?:/.test(url)) {
    let mode: string | null;
    try {
      mode = new URL(url).searchParams.get('sslmode');
    } catch {
      throw new ConfigError('STORE_URL', url, 'must be a valid postgres://user:password@host:port/database URL');
    }
    if (mode !== null && !['disable', 'prefer', 'require', 'verify-ca', 'verify-full'].includes(mode))
      throw new ConfigError('STORE_URL', url, `sslmode must be disable, prefer, require, verify-ca or verify-full, not ${mode}`);
  }
  int(env, 'STORE_POOL_SIZE', 10, 1, 1000);
  return url;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  masterKey(env);
  seedMnemonic(env);
  const dataDir = resolve(env.DATA_DIR || './data');
  const chain = (prefix: 'ETHEREUM' | 'SOLANA', network: 'TESTNET' | 'MAINNET'): ChainNetworkConfig => ({
    rpcUrl: rpcUrl(env, `${prefix}_${network}_RPC_URL`),
    usdcToken: tokenAddress(env, `${prefix}_${network}_${prefix === 'ETHEREUM' ? 'USDC_ADDRESS' : 'USDC_MINT'}`, prefix),
    confirmations: int(env, `${prefix}_${network}_CONFIRMATIONS`, network === 'MAINNET' ? 12 : 2, 1, 10_000),
    commitment: commitment(env, `${prefix}_${network}_COMMITMENT`, network),
  });
  const chains = {
    ethereum: { testnet: chain('ETHEREUM', 'TESTNET'), mainnet: chain('ETHEREUM', 'MAINNET') },
    solana: { testnet: chain('SOLANA', 'TESTNET'), mainnet: chain('SOLANA', 'MAINNET') },
  };
  const services = list(env.SERVICES);
  return {
    port,
    host: host(env),
    publicUrl: (httpUrl(env, 'PUBLIC_URL') || `http://localhost:${port}`).replace(/\/+$/, ''),
    dataDir,
    storeUrl: storeUrl(env, dataDir),
    storePoolSize: int(env, 'STORE_POOL_SIZE', 10, 1),
    transporter: transporterUrl(env),
    cluster: {
      secret: clusterSecret(env),
      natsUser: env.NATS_USER ?? '',
      natsPassword: env.NATS_PASSWORD ?? '',
      natsToken: env.NATS_TOKEN ?? '',
      tls: natsTls(env),
    },
    namespace: word(env, 'NAMESPACE') || 'payments',
    nodeId: word(env, 'NODE_ID') || undefined,
    services: services.length === 0 || services.includes('all') ? null : services,
    smtpUrl: smtpUrl(env),
    mailFrom: env.MAIL_FROM || 'Payment Service <no-reply@localhost>',
    trustedEmailDomains: checkedList(env, 'TRUSTED_EMAIL_DOMAINS', (d) => DOMAIN.test(d), 'domains, e.g. shop.example'),
    trustedEmails: checkedList(env, 'TRUSTED_EMAILS', (e) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(e), 'email addresses'),
    powDifficulty: int(env, 'POW_DIFFICULTY', 20, 0, 32),
    registration: {
      intentsPerEmailPerHour: int(env, 'REGISTRATION_EMAIL_LIMIT_PER_HOUR', 5, 1),
      intentsPerDomainPerHour: int(env, 'REGISTRATION_DOMAIN_LIMIT_PER_HOUR', 100, 1),
      wrongCodesPerEmailPerDay: int(env, 'REGISTRATION_WRONG_CODES_PER_DAY', 10, 1),
    },
    trustedProxies: checkedList(env, 'TRUSTED_PROXIES', isCidr, 'IP addresses or CIDRs, e.g. 10.0.0.0/8'),
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE'),
    webhooks: {
      scanIntervalMs: int(env, 'WEBHOOK_SCAN_INTERVAL_MS', 1000, 10),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
      retryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, 10),
    },
    events: {
      // the safety net only (events are pushed): rows whose nudge was lost wait up to this long
      pollIntervalMs: int(env, 'EVENTS_POLL_INTERVAL_MS', 2000, 10),
      streamMaxMs: int(env, 'EVENTS_STREAM_MAX_MS', 30 * 60_000, 1000),
      heartbeatMs: int(env, 'EVENTS_HEARTBEAT_MS', 15_000, 100),
    },
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 1, 65535) : null,
    metricsToken: env.METRICS_TOKEN ?? '',
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 60, 1),
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 30, 1),
    sessionAmountLimit: decimalOrNull(env, 'SESSION_AMOUNT_LIMIT'),
    dailyVolumeLimit: decimalOrNull(env, 'DAILY_VOLUME_LIMIT'),
    payoutAmountLimit: decimalOrNull(env, 'PAYOUT_AMOUNT_LIMIT'),
    dailyPayoutLimit: decimalOrNull(env, 'DAILY_PAYOUT_LIMIT'),
    sessionScanIntervalMs: int(env, 'SESSION_SCAN_INTERVAL_MS', 1000, 10),
    listeners: {
      pollIntervalMs: int(env, 'CHAIN_POLL_INTERVAL_MS', 3000, 10),
      leaseTtlMs: int(env, 'CHAIN_LEASE_TTL_MS', 15_000, 100),
    },
    bodyLimit: bodyLimit(env),
    authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 2000),
    alerts: alertsConfig(env),
    audit: { sealIntervalMs: int(env, 'AUDIT_SEAL_INTERVAL_MS', 1000, 10) },
    moneyOut: {
      gasWalletMin: {
        ethereum: decimalOrNull(env, 'GAS_WALLET_MIN_ETH') ?? '0.01',
        solana: decimalOrNull(env, 'GAS_WALLET_MIN_SOL') ?? '0.05',
      },
      pollIntervalMs: int(env, 'BROADCAST_POLL_INTERVAL_MS', 2000, 10),
      rebroadcastMs: int(env, 'BROADCAST_REBROADCAST_MS', 15_000, 10),
      bumpAfterMs: int(env, 'BROADCAST_BUMP_AFTER_MS', 120_000, 10),
    },
    reconcile: {
      intervalMs: int(env, 'RECONCILE_INTERVAL_MS', 60_000, 0),
      addressesPerTick: int(env, 'RECONCILE_ADDRESSES_PER_TICK', 50, 1),
      blocksPerTick: int(env, 'RECONCILE_BLOCKS_PER_TICK', 200, 1),
    },
    agents: {
      settleTimeoutMs: int(env, 'X402_SETTLE_TIMEOUT_MS', 20_000, 0),
      scanIntervalMs: int(env, 'AGENTS_SCAN_INTERVAL_MS', 2000, 10),
      x402MinAmounts: railAmounts(env, 'X402_MIN_AMOUNTS'),
    },
    chains,
    rails: buildRails(chains),
    rates: loadRatesConfig(env),
    faucets: loadFaucetsConfig(env),
  };
}
