/**
 * Session diagnostics for merchants (the spec's merchant-safe `payment_session.diagnostics`): why a
 * session is stuck, mismatched, expired or waiting for confirmations. Pure: the service gathers the
 * facts (the session, what the chain listeners recorded for its address, what is on chain above the
 * confirmation depth, the listener's lease and cursor, the session's webhook deliveries) and this decides.
 *
 * Each finding has a stable `code`, a `severity` (info: nothing to do yet; warning: look at it; action:
 * somebody must act), a plain-language `explanation` and a `next_step`. Merchant-safe by construction:
 * findings are built from the fields listed here, never from documents passed through, so RPC URLs
 * (they hold provider keys), derivation indexes, key fingerprints, lease owners (node names) and other
 * merchants' data cannot appear.
 */
import { fromSubunits } from '../core/money.ts';
import type { DepositRecord, PaymentSessionState } from '../sessions/payment-session.ts';

export type FindingCode =
  | 'stuck_unconfirmed'
  | 'confirmation_lag'
  | 'listener_lag'
  | 'underpaid'
  | 'overpaid'
  | 'wrong_token'
  | 'wrong_network'
  | 'paid_after_expiry'
  | 'expired_unpaid'
  | 'webhook_failing';

export const FINDING_CODES: FindingCode[] = [
  'stuck_unconfirmed',
  'confirmation_lag',
  'listener_lag',
  'underpaid',
  'overpaid',
  'wrong_token',
  'wrong_network',
  'paid_after_expiry',
  'expired_unpaid',
  'webhook_failing',
];

export interface Finding {
  code: FindingCode;
  severity: 'info' | 'warning' | 'action';
  explanation: string;
  next_step: string;
  /** numbers, amounts and public chain references only */
  details: Record<string, string | number | boolean | null>;
}

/** What diagnosis reads of the session: its own stored shape (lib/sessions/payment-session.ts), narrowed. */
export type SessionFacts = Pick<
  PaymentSessionState,
  'id' | 'status' | 'chain' | 'network' | 'token' | 'decimals' | 'expected_subunits' | 'received_subunits' | 'expires_at'
> & {
  deposits: Array<Pick<DepositRecord, 'tx_hash' | 'token' | 'amount_subunits' | 'counted' | 'late' | 'reverted' | 'simulated'>>;
};

/** What the listeners stored for the session's address (collection `deposits`). */
export interface RecordedDeposit {
  tx_hash: string;
  network: string;
  token: string | null;
  amount_subunits: string;
  status: 'seen' | 'credited' | 'reverted' | 'orphan';
  orphan_reason: string | null;
  detected_at: string;
}

/** A transfer to the session's address in a block the listener has not processed yet (below depth). */
export interface UnconfirmedTransfer {
  tx_hash: string;
  token: string;
  amount_subunits: string;
  confirmations: number;
  /** the block's time (ISO), when known */
  block_time: string | null;
}

export interface ListenerFacts {
  /** the network has an RPC endpoint configured (a listener can run) */
  configured: boolean;
  /** a lease exists and has not lapsed */
  leaseHeld: boolean;
  /** when the listener last moved its cursor for this network or address (ISO), when known */
  lastProgressAt: string | null;
  /** blocks the listener may process but has not (Ethereum), when known */
  behindBlocks: number | null;
}

export interface WebhookFacts {
  event_type: string;
  status: string;
  attempts: Array<{ status: number | null; error: string | null; at: string }>;
  next_attempt_at: string | null;
}

export interface DiagnosticsInput {
  session: SessionFacts;
  now: Date;
  recorded: RecordedDeposit[];
  unconfirmed: UnconfirmedTransfer[];
  requiredConfirmations: number | null;
  listener: ListenerFacts;
  webhooks: WebhookFacts[];
  /** an unconfirmed transfer older than this is stuck (default 15 min) */
  stuckAfterMs?: number;
  /** a listener without progress for this long is lagging (default 2 min) */
  listenerStaleMs?: number;
  /** a listener more blocks behind than this is lagging (default 20) */
  listenerBehindBlocks?: number;
}

/** Smallest units as a decimal string of token units (exact, no floating point). */
export const units = fromSubunits;

const OPEN = new Set(['pending', 'partial_paid']);

/** What every check reads: the session, the clock, its amounts and whether it is still open. */
interface Facts {
  input: DiagnosticsInput;
  s: SessionFacts;
  now: Date;
  amount: (v: string | bigint) => string;
  expected: bigint;
  received: bigint;
  open: boolean;
  rail: string;
}

/** On chain, not yet at the confirmation depth (stuck when it waits too long). */
function unconfirmed({ input, s, now }: Facts): Finding[] {
  const findings: Finding[] = [];
  const stuckAfter = input.stuckAfterMs ?? 15 * 60_000;
  for (const t of input.unconfirmed) {
    const age = t.block_time ? now.getTime() - Date.parse(t.block_time) : 0;
    const details = {
      tx_hash: t.tx_hash,
      token: t.token,
      amount: units(t.amount_subunits, t.token === s.token ? s.decimals : decimalsOf(t.token, s)),
      confirmations: t.confirmations,
      required_confirmations: input.requiredConfirmations,
    };
    if (age > stuckAfter) {
      findings.push({
        code: 'stuck_unconfirmed',
        severity: 'warning',
        details: { ...details, minutes_waiting: Math.floor(age / 60_000) },
        explanation: `A payment of ${details.amount} to this session's address (transaction ${t.tx_hash}) has had ${t.confirmations} of ${input.requiredConfirmations ?? '?'} confirmations for ${Math.floor(age / 60_000)} minutes. New blocks are not being added on top of it as expected.`,
        next_step:
          'Check the transaction in a block explorer. If the chain is congested or stalled it will count once it has enough confirmations; if the transaction was dropped or replaced, ask the buyer to pay again.',
      });
    } else {
      findings.push({
        code: 'confirmation_lag',
        severity: 'info',
        details,
        explanation: `A payment of ${details.amount} (transaction ${t.tx_hash}) is on chain with ${t.confirmations} of ${input.requiredConfirmations ?? '?'} confirmations. It counts towards the session once it reaches the required depth.`,
        next_step: 'Nothing to do: wait for more blocks. The session updates and the webhook is sent by itself.',
      });
    }
  }
  return findings;
}

/** Recorded but not credited for a while: delivery to the session is behind. */
function undelivered({ input, now, amount }: Facts): Finding[] {
  const findings: Finding[] = [];
  for (const d of input.recorded) {
    if (d.status !== 'seen') continue;
    const age = now.getTime() - Date.parse(d.detected_at);
    if (age <= 2 * 60_000) continue;
    findings.push({
      code: 'stuck_unconfirmed',
      severity: 'warning',
      details: { tx_hash: d.tx_hash, amount: amount(d.amount_subunits), minutes_waiting: Math.floor(age / 60_000), recorded: true },
      explanation: `A confirmed payment of ${amount(d.amount_subunits)} (transaction ${d.tx_hash}) was recorded ${Math.floor(age / 60_000)} minutes ago but has not been credited to the session yet.`,
      next_step:
        'It is retried automatically. If it is still not credited in a few minutes, contact support with the session id and the transaction hash.',
    });
  }
  return findings;
}

/** The listener of the session's chain and network: not running, behind, or not configured. */
function listener({ input, s, now, open }: Facts): Finding[] {
  const findings: Finding[] = [];
  const l = input.listener;
  if (open && l.configured) {
    const stale = l.lastProgressAt !== null && now.getTime() - Date.parse(l.lastProgressAt) > (input.listenerStaleMs ?? 120_000);
    const behind = l.behindBlocks !== null && l.behindBlocks > (input.listenerBehindBlocks ?? 20);
    if (!l.leaseHeld || stale || behind) {
      findings.push({
        code: 'listener_lag',
        severity: 'action',
        details: { listener_running: l.leaseHeld, blocks_behind: l.behindBlocks, last_progress_at: l.lastProgressAt },
        explanation: !l.leaseHeld
          ? `No node is watching ${s.chain} ${s.network} for payments right now, so payments to this session are not being detected.`
          : `Payment detection on ${s.chain} ${s.network} is running behind${behind ? ` by ${l.behindBlocks} blocks` : ''}; payments are detected late.`,
        next_step:
          'This is on the service side, not yours: payments are not lost and are credited once detection catches up. Tell the service operator if it lasts.',
      });
    }
  } else if (open && !l.configured) {
    findings.push({
      code: 'listener_lag',
      severity: 'action',
      details: { listener_running: false, blocks_behind: null, last_progress_at: null },
      explanation: `This service has no connection to ${s.chain} ${s.network} configured, so payments to this session cannot be detected.`,
      next_step: 'Tell the service operator; sandbox sessions can still be completed with simulate.',
    });
  }
  return findings;
}

/** Amounts: under- and overpaid. */
function amounts({ s, amount, expected, received, open }: Facts): Finding[] {
  const findings: Finding[] = [];
  const counted = s.deposits.filter((d) => d.counted && !d.reverted);
  if (received > 0n && received < expected) {
    findings.push({
      code: 'underpaid',
      severity: open ? 'action' : 'warning',
      details: { expected: amount(expected), received: amount(received), missing: amount(expected - received), payments: counted.length },
      explanation: `The session received ${amount(received)} of the expected ${amount(expected)}; ${amount(expected - received)} is missing.`,
      next_step: open
        ? `Ask the buyer to send the missing ${amount(expected - received)} to the same address before the session expires at ${s.expires_at}.`
        : 'The session is closed: refund or settle the difference with the buyer directly.',
    });
  }
  if (received > expected) {
    findings.push({
      code: 'overpaid',
      severity: 'warning',
      details: { expected: amount(expected), received: amount(received), excess: amount(received - expected), payments: counted.length },
      explanation: `The session received ${amount(received)}, which is ${amount(received - expected)} more than the expected ${amount(expected)}. The excess is kept and shown on the session.`,
      next_step: `Refund ${amount(received - expected)} to the buyer if that is your policy.`,
    });
  }
  return findings;
}

/** Payments that cannot count: another token, another network. */
function uncountable({ input, s, rail }: Facts): Finding[] {
  const findings: Finding[] = [];
  const wrongToken = [
    ...s.deposits
      .filter((d) => !d.counted && !d.simulated && d.token !== s.token)
      .map((d) => ({ tx: d.tx_hash, token: d.token, amt: d.amount_subunits })),
    ...input.recorded
      .filter((d) => d.status === 'orphan' && d.orphan_reason === 'wrong_token')
      .map((d) => ({ tx: d.tx_hash, token: d.token ?? 'an unsupported token', amt: d.amount_subunits })),
  ];
  const seenTx = new Set<string>();
  for (const w of wrongToken) {
    if (w.tx && seenTx.has(w.tx)) continue;
    if (w.tx) seenTx.add(w.tx);
    findings.push({
      code: 'wrong_token',
      severity: 'action',
      details: { tx_hash: w.tx, token: w.token, expected_token: s.token },
      explanation: `A payment in ${w.token} (transaction ${w.tx}) arrived at this session's address, but the session expects ${rail}. It does not count towards the session.`,
      next_step: `Ask the buyer to pay in ${s.token}. Contact support about returning the ${w.token} payment.`,
    });
  }
  for (const d of input.recorded.filter((x) => x.status === 'orphan' && x.orphan_reason === 'wrong_network')) {
    findings.push({
      code: 'wrong_network',
      severity: 'action',
      details: { tx_hash: d.tx_hash, network: d.network, expected_network: s.network },
      explanation: `A payment (transaction ${d.tx_hash}) was sent to this session's address on ${s.chain} ${d.network}, but the session is on ${s.chain} ${s.network}. It does not count towards the session.`,
      next_step: `Ask the buyer to pay on ${s.network}. Contact support about the payment on ${d.network}.`,
    });
  }
  return findings;
}

/** Expiry: paid late, or expired unpaid. */
function expiry({ s, amount, expected, received }: Facts): Finding[] {
  const findings: Finding[] = [];
  const late = s.deposits.filter((d) => d.late && !d.reverted);
  if (late.length > 0) {
    const sum = late.reduce((acc, d) => acc + BigInt(d.amount_subunits), 0n);
    findings.push({
      code: 'paid_after_expiry',
      severity: 'action',
      details: { late_payments: late.length, amount: amount(sum), expired_at: s.expires_at },
      explanation: `${late.length === 1 ? 'A payment' : `${late.length} payments`} of ${amount(sum)} arrived after the session expired at ${s.expires_at}. It is recorded on the session but the session stays expired.`,
      next_step: 'Fulfil the order manually if you accept late payments, or refund the buyer.',
    });
  }
  if (s.status === 'expired' && received === 0n && late.length === 0) {
    findings.push({
      code: 'expired_unpaid',
      severity: 'info',
      details: { expired_at: s.expires_at, expected: amount(expected) },
      explanation: `The session expired at ${s.expires_at} without any payment to its address.`,
      next_step: "Create a new session if the buyer still wants to pay; never reuse the expired session's address.",
    });
  }
  return findings;
}

/** Webhooks that are failing. */
function webhooks({ input }: Facts): Finding[] {
  const findings: Finding[] = [];
  for (const w of input.webhooks) {
    const failedAttempts = w.attempts.filter((a) => a.error !== null || a.status === null || a.status < 200 || a.status >= 300);
    const last = w.attempts[w.attempts.length - 1];
    if (w.status === 'delivered' || w.status === 'skipped' || !last || failedAttempts.length === 0) continue;
    if (last.status !== null && last.status >= 200 && last.status < 300) continue;
    findings.push({
      code: 'webhook_failing',
      severity: 'action',
      details: {
        event_type: w.event_type,
        failed_attempts: failedAttempts.length,
        last_http_status: last.status,
        last_error: last.error,
        gave_up: w.status === 'failed',
        next_attempt_at: w.status === 'failed' ? null : w.next_attempt_at,
      },
      explanation: `The ${w.event_type} webhook could not be delivered to your webhook URL: ${failedAttempts.length} attempt${failedAttempts.length === 1 ? '' : 's'} failed, the last with ${last.status !== null ? `HTTP ${last.status}` : last.error}.${w.status === 'failed' ? ' The retry schedule is over.' : ''}`,
      next_step:
        'Fix your endpoint (it must answer 2xx quickly, over https, without redirects), then redeliver with POST /v1/payment_sessions/{session_id}/webhook/retry.',
    });
  }
  return findings;
}

export function diagnose(input: DiagnosticsInput): Finding[] {
  const s = input.session;
  const f: Facts = {
    input,
    s,
    now: input.now,
    amount: (v) => `${units(v, s.decimals)} ${s.token}`,
    expected: BigInt(s.expected_subunits),
    received: BigInt(s.received_subunits),
    open: OPEN.has(s.status),
    rail: `${s.token} on ${s.chain} ${s.network}`,
  };
  // in the order a merchant reads them: the money on its way, detection, amounts, what cannot count, time, webhooks
  return [unconfirmed, undelivered, listener, amounts, uncountable, expiry, webhooks].flatMap((check) => check(f));
}

/** Decimals of another token of the session's chain, for showing a wrong-token amount. */
function decimalsOf(token: string, s: SessionFacts): number {
  if (token === 'ETH') return 18;
  if (token === 'SOL') return 9;
  if (token === 'USDC') return 6;
  return s.decimals;
}
