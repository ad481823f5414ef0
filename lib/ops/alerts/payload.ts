/**
 * The alert payload: exactly the spec's fields, built field by field from an allowlist (never by deleting
 * from a bigger object), each value checked against the shape it must have. A value that does not have
 * that shape, or that looks like a secret (an API key, a webhook secret, a bearer token, a seed phrase, a
 * private key), is left out and its field name listed in `redacted_fields`.
 *
 * Never in a payload (spec): API key values, webhook secrets, signature values, private keys, raw request
 * or response bodies, access tokens, seed phrases, full wallet or payment secrets. Hashes (source IP, user
 * agent, body) are keyed HMACs (lib/ops/hash.ts).
 */
import type { AlertType, Severity } from './rules.ts';

export const ALERT_PAYLOAD_FIELDS = [
  'alert_id',
  'alert_type',
  'severity',
  'merchant_id',
  'merchant_name',
  'agent_id',
  'environment',
  'chain',
  'network',
  'route',
  'window_start',
  'window_end',
  'count',
  'threshold',
  'request_id',
  'session_id',
  'delivery_id',
  'source_ip_hash',
  'user_agent_hash',
  'body_hash',
  'last_error_code',
  'row',
  'address',
  'asset',
  'difference',
  'redacted_fields',
] as const;

export interface AlertPayload {
  alert_id: string;
  alert_type: AlertType;
  severity: Severity;
  merchant_id: string | null;
  merchant_name: string | null;
  agent_id: string | null;
  environment: 'sandbox' | 'live' | null;
  chain: string | null;
  network: string | null;
  route: string | null;
  window_start: string;
  window_end: string;
  count: number;
  threshold: number;
  request_id: string | null;
  session_id: string | null;
  delivery_id: string | null;
  source_ip_hash: string | null;
  user_agent_hash: string | null;
  body_hash: string | null;
  last_error_code: string | null;
  /** reconciliation_drift: the outbox row, the platform address, the asset and chain − books in smallest units */
  row: string | null;
  address: string | null;
  asset: string | null;
  difference: string | null;
  redacted_fields: string[];
}

/** What hook sites know about the request or delivery behind an observation (all optional). */
export interface AlertContext {
  merchant_id?: string | null;
  merchant_name?: string | null;
  agent_id?: string | null;
  environment?: string | null;
  chain?: string | null;
  network?: string | null;
  route?: string | null;
  request_id?: string | null;
  session_id?: string | null;
  delivery_id?: string | null;
  source_ip_hash?: string | null;
  user_agent_hash?: string | null;
  body_hash?: string | null;
  last_error_code?: string | null;
  row?: string | null;
  address?: string | null;
  asset?: string | null;
  difference?: string | null;
  /** request parts the context deliberately does not carry (credentials headers, the body) */
  withheld?: string[];
}

const ID = /^[a-z]{2,6}_[0-9a-z]{6,40}$/;
const HASH = /^[0-9a-f]{32}$/;
const ROUTE = /^(GET|POST|PATCH|PUT|DELETE) \/[A-Za-z0-9_/:.{}-]{0,200}$/;
const REQUEST_ID = /^[0-9a-zA-Z-]{8,64}$/;
const CODE = /^[a-z0-9_]{1,48}$/;
const WORD = /^[a-z0-9_-]{1,32}$/;
const WITHHELD = /^[a-z0-9_.-]{1,48}$/;
/** an outbox row id: `<purpose>:<id>[:<stage>…]` */
const ROW = /^[a-z0-9_]{1,24}:[A-Za-z0-9_.:-]{1,160}$/;
/** an Ethereum address or a Solana public key: public by nature, so not tested as a secret */
const ADDRESS = /^(0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/;
const ASSET = /^[a-z]{2,16}:[a-z]{2,16}:[A-Z0-9]{2,10}$/;
/** a signed integer amount in smallest units */
const DIFFERENCE = /^-?[0-9]{1,78}$/;
const PUBLIC_SHAPES = new Set([HASH, ROUTE, ADDRESS, DIFFERENCE]);

/**
 * Text that looks like a credential, whatever field it sits in: our key and secret prefixes, bearer
 * tokens, long hex or base64 runs (private keys, signatures, HMACs), PEM blocks, and runs of twelve or
 * more lower-case words (a BIP-39 seed phrase).
 */
export function looksSecret(value: string): boolean {
  return (
    /service_sk_(live|test)_|whsec_|usr_[A-Za-z0-9]{16}|inv_[A-Za-z0-9]{16}|bearer\s|-----BEGIN|v1=[0-9a-f]{16}/i.test(value) ||
    /(0x)?[0-9a-fA-F]{40,}/.test(value) ||
    /[A-Za-z0-9+/_-]{40,}/.test(value) ||
    /(\b[a-z]{3,8}\b[\s,]+){11,}\b[a-z]{3,8}\b/.test(value)
  );
}

/** Builds the payload; every field is copied explicitly and checked. */
export function buildAlertPayload(
  a: {
    alert_id: string;
    alert_type: AlertType;
    severity: Severity;
    window_start: string;
    window_end: string;
    count: number;
    threshold: number;
  },
  ctx: AlertContext,
): AlertPayload {
  const redacted = new Set<string>();
  const pick = (name: keyof AlertContext, re: RegExp): string | null => {
    const v = ctx[name];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string' || !re.test(v) || (!PUBLIC_SHAPES.has(re) && looksSecret(v))) {
      redacted.add(name);
      return null;
    }
    return v;
  };
  const name = (): string | null => {
    const v = ctx.merchant_name;
    if (typeof v !== 'string' || v === '') return null;
    // a merchant's own words: printable, bounded, and never something that looks like a credential
    // eslint-disable-next-line no-control-regex -- control characters are what this strips
    const clean = v.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 100);
    if (looksSecret(clean)) {
      redacted.add('merchant_name');
      return null;
    }
    return clean;
  };
  const env = ctx.environment === 'sandbox' || ctx.environment === 'live' ? ctx.environment : ctx.environment === 'demo' ? 'sandbox' : null;
  const payload: AlertPayload = {
    alert_id: a.alert_id,
    alert_type: a.alert_type,
    severity: a.severity,
    merchant_id: pick('merchant_id', ID),
    merchant_name: name(),
    agent_id: pick('agent_id', /^[0-9a-z_]{6,64}$/),
    environment: env,
    chain: pick('chain', WORD),
    network: pick('network', WORD),
    route: pick('route', ROUTE),
    window_start: a.window_start,
    window_end: a.window_end,
    count: a.count,
    threshold: a.threshold,
    request_id: pick('request_id', REQUEST_ID),
    session_id: pick('session_id', ID),
    delivery_id: pick('delivery_id', ID),
    source_ip_hash: pick('source_ip_hash', HASH),
    user_agent_hash: pick('user_agent_hash', HASH),
    body_hash: pick('body_hash', HASH),
    last_error_code: pick('last_error_code', CODE),
    row: pick('row', ROW),
    address: pick('address', ADDRESS),
    asset: pick('asset', ASSET),
    difference: pick('difference', DIFFERENCE),
    redacted_fields: [],
  };
  for (const w of ctx.withheld ?? []) if (WITHHELD.test(w)) redacted.add(w);
  payload.redacted_fields = [...redacted].sort();
  return payload;
}
