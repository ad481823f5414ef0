/**
 * Payment sessions (facade): creation with every policy check of the spec, demo sessions, reading and
 * sandbox/demo simulation. The session itself is an actor (services/session-actors.service.ts); this
 * service validates, authorizes, derives the deposit address and sends the actor its messages.
 *
 * Order of checks on POST /v1/payment_sessions (bad input never changes the store):
 *   body schema → paymentMethod (methodID 0 only) → rail (chain, network, token) → expires_in bounds →
 *   amount (decimals, min_amount) → metadata size → sandbox/testnet → mainnet KYC → SESSION_AMOUNT_LIMIT →
 *   catalog checkout reference → DAILY_VOLUME_LIMIT (reserved atomically, released when creation fails) →
 *   address → actor `create`.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import type { Caller } from './routes/types.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/validation.ts';
import { badRequest, forbidden, notFound, rateLimited, conflict, unauthorized, IDEMPOTENCY_MISMATCH } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { canonicalJson, IDEMPOTENCY_WINDOW_MS } from '../lib/idempotency.ts';
import { sha256Hex } from '../lib/secrets.ts';
import { AmountError, decimalText, toApiNumber, toSubunits } from '../lib/money.ts';
import { parseDuration } from '../lib/duration.ts';
import { findRail, railKey, type Rail } from '../config/rails.ts';
import type { AbuseLabels, AbuseOutcome, AbuseSignal, Environment } from '../lib/metrics.ts';
import { isConflict, isDuplicate, type Doc } from '../lib/store/port.ts';
import { AddressWorkers } from '../lib/address-workers.ts';
import { AddressDeriver, AddressIndexAllocator, explorerUrl, loadSeedPhrase, paymentUri, type AddressChain } from '../lib/addresses.ts';
import { sessionExpiryMixin } from '../mixins/session-expiry.mixin.ts';
import { decodeCursor, encodeCursor, parseLimit } from '../lib/catalog/rules.ts';
import {
  DEMO_MERCHANT_ID, isDue, isOpen,
  type PaymentSessionState, type SessionMsg, type SessionReply,
} from '../actors/payment-session.ts';

/** expires_in bounds (documented in the README and the OpenAPI description) */
export const EXPIRES_IN_MIN_MS = 10_000;
export const EXPIRES_IN_MAX_MS = 7 * 86_400_000;
export const DEMO_EXPIRES_IN_MAX_MS = 3_600_000;
export const DEMO_DEFAULT_EXPIRES_IN = '15m';
/** demo sessions are for trying the flow: no amount beyond this many token units */
export const DEMO_AMOUNT_MAX = 1000;
export const METADATA_MAX_BYTES = 4096;
const DAY_MS = 86_400_000;

type Meta = { user?: Caller; client?: { ip_hash: string }; headers?: Record<string, string | undefined> };
type PaymentMethodInput = { methodID: number; chain: string; token: string; network: string };
interface CreateBody {
  amount: number;
  expires_in: string;
  paymentMethod?: PaymentMethodInput;
  payment_method?: PaymentMethodInput;
  metadata?: Record<string, unknown>;
}
interface DemoBody { chain?: string; network?: string; token?: string; amount?: number; expires_in?: string }
/** Idempotency-Key on creation: the key's record names the session it created (collection `idempotency`). */
interface IdempotentCreateDoc extends Doc { payload_hash: string; session_id: string; created_at: string; expires_at: string }
const IDEMPOTENCY_WAIT_MS = 5_000;
interface VolumeDoc extends Doc { merchant_id: string; rail: string; day: string; sum_subunits: string; expires_at: string }

/**
 * The Ethereum block the listener has processed up to (head − depth + 1), when the session has deposits
 * in blocks: their confirmations keep growing after the credit, and a reader should see today's count.
 */
export async function processedBlock(rt: Pick<Runtime, 'store'>, s: PaymentSessionState): Promise<number | undefined> {
  if (s.chain !== 'ethereum' || !s.deposits.some((d) => d.block_number !== null)) return undefined;
  const cursor = await rt.store.get<{ id: string; block: number }>('listener_cursors', `ethereum:${s.network}`);
  return cursor && cursor.block >= 0 ? cursor.block : undefined;
}

/** The PaymentSession as the API shows it (spec fields, plus additive exact amounts and deposits). */
export function presentSession(s: PaymentSessionState, rt: Pick<Runtime, 'config'>, processed?: number) {
  const net = rt.config.chains[s.chain as AddressChain]?.[s.network as 'testnet' | 'mainnet'];
  const depth = s.chain === 'ethereum' ? (net as { confirmations?: number } | undefined)?.confirmations ?? 1 : 0;
  const confirmationsOf = (d: PaymentSessionState['deposits'][number]) =>
    processed !== undefined && d.block_number !== null && !d.reverted ? Math.max(d.confirmations, processed - d.block_number + depth) : d.confirmations;
  const target = {
    chain: s.chain, network: s.network, token: s.token, decimals: s.decimals, address: s.address,
    amount_subunits: s.expected_subunits, token_contract: s.token === 'USDC' ? net?.usdcToken ?? '' : '', rpc_url: net?.rpcUrl ?? '',
  };
  const paying = [...s.deposits].reverse().find((d) => d.counted && !d.reverted && !d.simulated && d.tx_hash);
  return {
    session_id: s.id,
    merchant_id: s.merchant_id,
    expected_amount: toApiNumber(s.expected_subunits, s.decimals),
    received_amount: toApiNumber(s.received_subunits, s.decimals),
    expected_amount_subunits: s.expected_subunits,
    received_amount_subunits: s.received_subunits,
    address: s.address,
    status: s.status,
    metadata: s.metadata,
    expires_at: s.expires_at,
    ...(s.completed_at ? { completed_at: s.completed_at } : {}),
    ...(s.expired_at ? { expired_at: s.expired_at } : {}),
    created_at: s.created_at,
    updated_at: s.updated_at,
    demo: s.demo,
    currency: s.token,
    payment_url: `${rt.config.publicUrl}/checkout/${s.id}`,
    qr_data: paymentUri(target),
    explorer_url: explorerUrl(target, paying?.tx_hash ?? null),
    paymentMethod: { methodID: s.method_id, chain: s.chain, token: s.token, network: s.network },
    deposits: s.deposits.map((d) => ({
      tx_hash: d.tx_hash,
      index: d.index,
      amount: toApiNumber(d.amount_subunits, s.decimals),
      amount_subunits: d.amount_subunits,
      token: d.token,
      confirmations: confirmationsOf(d),
      detected_at: d.detected_at,
      late: d.late,
      counted: d.counted,
      reverted: d.reverted,
      simulated: d.simulated,
    })),
  };
}

/** Largest whole number of smallest units not above a decimal limit (a cap with more decimals than the token). */
function limitSubunits(limit: string, decimals: number): bigint {
  const [whole, frac = ''] = decimalText(limit).split('.');
  return BigInt(whole + frac.slice(0, decimals).padEnd(decimals, '0'));
}

export function createSessionsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  let deriver: AddressDeriver;
  let workers: AddressWorkers;
  const allocator = new AddressIndexAllocator(store);

  function signal(signal: AbuseSignal, outcome: AbuseOutcome, environment: Environment, rail?: { chain: string; network: string; token: string }) {
    rt.metrics.signal({
      signal, outcome, environment,
      chain: rail?.chain as AbuseLabels['chain'], network: rail?.network as AbuseLabels['network'], token: rail?.token as AbuseLabels['token'],
    });
  }

  function send(ctx: Context, id: string, msg: SessionMsg): Promise<SessionReply> {
    return ctx.call('session-actors.send', { id, msg });
  }

  function parseExpiresIn(value: string, maxMs: number, maxText: string): number {
    const ms = parseDuration(value);
    if (ms === null) throw badRequest(`expires_in must be a duration such as 15m, 45m or 1h (a whole number followed by s, m, h or d), between 10s and ${maxText}`);
    if (ms < EXPIRES_IN_MIN_MS || ms > maxMs) throw badRequest(`expires_in must be between 10s and ${maxText}; got ${value}`);
    return ms;
  }

  /** The amount in smallest units, checked against the rail's decimals and min_amount. */
  function parseAmount(amount: number, rail: Rail): bigint {
    let units: bigint;
    try {
      units = toSubunits(amount, rail.decimals);
    } catch (e) {
      if (e instanceof AmountError) {
        throw badRequest(/decimal places/.test(e.message)
          ? `amount has more decimal places than ${rail.token} on ${rail.chain} ${rail.network} allows (${rail.decimals}); round it to ${rail.decimals} decimals`
          : 'amount must be a positive decimal number');
      }
      throw e;
    }
    if (units <= 0n) throw badRequest('amount must be greater than 0');
    if (units < toSubunits(rail.min_amount, rail.decimals)) {
      throw badRequest(`amount is below the minimum of ${rail.min_amount} ${rail.token} for ${rail.chain} ${rail.network}; send at least ${rail.min_amount}`);
    }
    return units;
  }

  async function newSession(ctx: Context, args: {
    id?: string; merchant_id: string; sandbox: boolean; demo: boolean; environment: Environment; rail: Rail;
    expected: bigint; expiresMs: number; metadata: Record<string, unknown>;
  }): Promise<PaymentSessionState> {
    const chain = args.rail.chain as AddressChain;
    const index = await allocator.next(chain);
    const address = await workers.derive(chain, index);
    const now = rt.now();
    const at = now.toISOString();
    const session: PaymentSessionState = {
      id: args.id ?? newId('ps'),
      merchant_id: args.merchant_id, demo: args.demo, sandbox: args.sandbox, environment: args.environment,
      method_id: 0, chain: args.rail.chain, network: args.rail.network, token: args.rail.token, decimals: args.rail.decimals,
      expected_subunits: args.expected.toString(), received_subunits: '0',
      address, address_index: index, key_fingerprint: deriver.fingerprint,
      status: 'pending', metadata: args.metadata,
      expires_at: new Date(now.getTime() + args.expiresMs).toISOString(), expiry_due_at: null,
      completed_at: null, expired_at: null, created_at: at, updated_at: at, deposits: [], events: [],
    };
    const reply = await send(ctx, session.id, { type: 'create', session });
    return reply.session;
  }

  /**
   * Adds the amount to the merchant's volume of the day on this rail if it stays within the cap;
   * returns the release used when the session is not created after all.
   */
  async function reserveDailyVolume(merchantId: string, environment: Environment, rail: Rail, amount: bigint): Promise<() => Promise<void>> {
    const limit = limitSubunits(config.dailyVolumeLimit!, rail.decimals);
    const now = rt.now();
    const day = now.toISOString().slice(0, 10);
    const id = `${merchantId}:${railKey(rail)}:${day}`;
    const expiresAt = new Date(Date.parse(`${day}T00:00:00.000Z`) + 2 * DAY_MS).toISOString();
    const change = async (delta: bigint, check: boolean) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const doc = await store.get<VolumeDoc>('session_volume', id);
        const used = BigInt(doc?.sum_subunits ?? '0');
        if (check && used + delta > limit) {
          signal('limit_violation', 'daily_volume_limit_exceeded', environment, rail);
          const left = limit > used ? limit - used : 0n;
          throw badRequest(`daily volume limit of ${config.dailyVolumeLimit} ${rail.token} on ${rail.chain} ${rail.network} reached: ${toApiNumber(left, rail.decimals)} ${rail.token} left today (UTC); lower the amount or try again tomorrow`);
        }
        const sum = used + delta < 0n ? 0n : used + delta;
        const next: VolumeDoc = { id, merchant_id: merchantId, rail: railKey(rail), day, sum_subunits: sum.toString(), expires_at: expiresAt };
        try {
          await store.write([doc ? { op: 'cas', coll: 'session_volume', doc: next, expected: doc.version! } : { op: 'insert', coll: 'session_volume', doc: next }]);
          return;
        } catch (e) {
          if (!isConflict(e) && !isDuplicate(e)) throw e;
          await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, 1 + attempt)));
        }
      }
      throw rateLimited('too many concurrent session creations, retry later');
    };
    await change(amount, true);
    return () => change(-amount, false);
  }

  /**
   * Catalog checkout: the catalog service checks that the session matches the checkout reference (merchant,
   * amount, rail, not expired) and answers a 4xx otherwise. Fails closed: without a reachable catalog
   * service the creation is refused (503), never created unchecked.
   */
  async function checkCheckoutReference(ctx: Context, merchantId: string, ref: unknown, amount: bigint, rail: Rail): Promise<void> {
    if (typeof ref !== 'string' || ref === '') throw badRequest('metadata.checkout_reference_id must be a non-empty string');
    await ctx.call('catalog.checkCheckoutReference', {
      merchant_id: merchantId, checkout_reference_id: ref, amount_subunits: amount.toString(),
      chain: rail.chain, network: rail.network, token: rail.token,
    });
  }

  /**
   * Idempotency-Key: the same key and payload within 24 hours answers with the session the first request
   * created (as it is now); another payload is a 409. The key is reserved, with the id of the session to
   * create, before anything is written; a creation that fails frees it again.
   */
  function idempotencyRecordId(merchantId: string, key: string): string {
    return `sessions.create:${merchantId}:${sha256Hex(key)}`;
  }

  async function replayIdempotent(ctx: Context, recordId: string, payloadHash: string): Promise<PaymentSessionState | null> {
    const rec = await store.get<IdempotentCreateDoc>('idempotency', recordId);
    if (!rec) return null;
    if (rec.payload_hash !== payloadHash) throw conflict(IDEMPOTENCY_MISMATCH);
    const deadline = Date.now() + IDEMPOTENCY_WAIT_MS;
    for (;;) {
      const s = await store.get<PaymentSessionState>('payment_sessions', rec.session_id);
      if (s) return s;
      // the first request is still creating it (or failed and is about to free the key)
      if (Date.now() > deadline || !(await store.get('idempotency', recordId))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw conflict('a request with this Idempotency-Key is still in progress; retry it');
  }

  async function readableSession(ctx: Context, id: string): Promise<PaymentSessionState> {
    const caller = (ctx.meta as Meta).user ?? null;
    const s = typeof id === 'string' ? await store.get<PaymentSessionState>('payment_sessions', id) : null;
    if (caller?.kind === 'merchant') {
      if (!s || (s.merchant_id !== caller.merchant_id && !s.demo)) throw notFound('payment session');
      return s;
    }
    // without credentials only demo sessions are readable; nothing tells whether another id exists
    if (!s || !s.demo) throw unauthorized();
    return s;
  }

  /** A session read after its deadline but before the scanner reached it expires now (one answer everywhere). */
  async function current(ctx: Context, s: PaymentSessionState): Promise<PaymentSessionState> {
    if (isOpen(s.status) && isDue(s, rt.now())) return (await send(ctx, s.id, { type: 'expire' })).session;
    return s;
  }

  return {
    name: 'sessions',
    // the expiry scanner runs wherever the sessions API runs
    mixins: [sessionExpiryMixin(rt)],
    actions: {
      /** POST /v1/payment_sessions */
      create: {
        async handler(ctx: Context<{ body: unknown }>) {
          const caller = (ctx.meta as Meta).user;
          if (caller?.kind !== 'merchant') throw unauthorized();
          const body = validate<CreateBody>('CreatePaymentSessionRequest', ctx.params.body);
          const idemKey = (ctx.meta as Meta).headers?.['idempotency-key'];
          if (idemKey !== undefined && (idemKey.length === 0 || idemKey.length > 255)) throw badRequest('Idempotency-Key must be 1 to 255 characters');
          const idem = idemKey ? { id: idempotencyRecordId(caller.merchant_id, idemKey), hash: sha256Hex(canonicalJson(body)) } : null;
          if (idem) {
            const earlier = await replayIdempotent(ctx, idem.id, idem.hash);
            if (earlier) {
              created(ctx, `/v1/payment_sessions/${earlier.id}`);
              return presentSession(await current(ctx, earlier), rt);
            }
          }
          const [a, b] = [body.paymentMethod, body.payment_method];
          if (a && b && (a.methodID !== b.methodID || a.chain !== b.chain || a.network !== b.network || a.token !== b.token)) {
            throw badRequest('send paymentMethod only (payment_method is its legacy name); the two differ');
          }
          const pm = body.paymentMethod ?? body.payment_method;
          if (!pm) throw badRequest('body.paymentMethod is required: {methodID, chain, token, network}');
          const environment: Environment = caller.sandbox ? 'sandbox' : 'live';
          if (pm.methodID === 1) throw badRequest('methodID 1 (fiat) is not available: no fiat rail is enabled; use methodID 0 with a rail from GET /v1/payment_methods');
          const rail = findRail(config.rails, pm.chain, pm.network, pm.token);
          if (!rail) {
            throw badRequest(`no enabled rail is ${pm.chain}:${pm.network}:${pm.token}; choose a (chain, network, token) triple from GET /v1/payment_methods`);
          }
          const expiresMs = parseExpiresIn(body.expires_in, EXPIRES_IN_MAX_MS, '7d');
          const expected = parseAmount(body.amount, rail);
          const metadata = body.metadata ?? {};
          if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
            throw badRequest(`metadata is larger than 4KB (${METADATA_MAX_BYTES} bytes as JSON); keep references in it, not documents`);
          }
          if (rail.network === 'mainnet') {
            if (caller.sandbox) {
              signal('limit_violation', 'mainnet_kyc_required', environment, rail);
              throw forbidden('sandbox merchants can use testnet rails only; use network testnet, or a live merchant account for mainnet');
            }
            const merchant = await store.get<{ kyc_status?: string } & Doc>('merchants', caller.merchant_id);
            if (merchant?.kyc_status !== 'verified') {
              signal('limit_violation', 'mainnet_kyc_required', environment, rail);
              throw forbidden('mainnet payment sessions require KYC verification of the merchant; complete KYC with the operator, or use network testnet');
            }
          }
          if (config.sessionAmountLimit !== null && expected > limitSubunits(config.sessionAmountLimit, rail.decimals)) {
            signal('limit_violation', 'amount_limit_exceeded', environment, rail);
            throw badRequest(`amount exceeds the per-session limit of ${config.sessionAmountLimit} ${rail.token}; lower the amount or split the payment`);
          }
          if (metadata.checkout_reference_id !== undefined) {
            await checkCheckoutReference(ctx, caller.merchant_id, metadata.checkout_reference_id, expected, rail);
          }
          const sessionId = newId('ps');
          if (idem) {
            const now = rt.now();
            const rec: IdempotentCreateDoc = {
              id: idem.id, payload_hash: idem.hash, session_id: sessionId,
              created_at: now.toISOString(), expires_at: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS).toISOString(),
            };
            try {
              await store.write([{ op: 'insert', coll: 'idempotency', doc: rec }]);
            } catch (e) {
              if (!isDuplicate(e)) throw e;
              // a concurrent request with the same key won the reservation: answer with its session
              const winner = await replayIdempotent(ctx, idem.id, idem.hash);
              if (!winner) throw conflict('a request with this Idempotency-Key is still in progress; retry it');
              created(ctx, `/v1/payment_sessions/${winner.id}`);
              return presentSession(winner, rt);
            }
          }
          let release: (() => Promise<void>) | null = null;
          let session: PaymentSessionState;
          try {
            release = config.dailyVolumeLimit !== null ? await reserveDailyVolume(caller.merchant_id, environment, rail, expected) : null;
            session = await newSession(ctx, {
              id: sessionId, merchant_id: caller.merchant_id, sandbox: caller.sandbox, demo: false, environment, rail, expected, expiresMs, metadata,
            });
          } catch (e) {
            // the actor may have committed before its reply was lost: that session keeps its volume and key
            if (await store.get('payment_sessions', sessionId).catch(() => null)) throw e;
            await release?.().catch((err) => this.logger.warn('daily volume not released:', (err as Error).message));
            if (idem) await store.write([{ op: 'delete', coll: 'idempotency', id: idem.id }]).catch(() => undefined);
            throw e;
          }
          created(ctx, `/v1/payment_sessions/${session.id}`);
          return presentSession(session, rt);
        },
      },

      /** POST /v1/payment_sessions/demo: public; testnet rails only; limited per client. */
      createDemo: {
        async handler(ctx: Context<{ body?: unknown }>) {
          const ip = (ctx.meta as Meta).client?.ip_hash ?? 'unknown';
          const n = await store.increment(`public:demo:${ip}`, 1, 60_000, rt.now());
          if (n > config.publicRateLimitPerMinute) {
            throw rateLimited(`too many demo sessions from this client (at most ${config.publicRateLimitPerMinute} a minute); retry in a minute`);
          }
          const raw = ctx.params.body;
          const body = validate<DemoBody>('CreateDemoSessionRequest', raw === undefined || raw === null || raw === '' ? {} : raw);
          const network = body.network ?? 'testnet';
          if (network !== 'testnet') throw badRequest('demo sessions use testnet rails only; set network to testnet');
          const testnet = config.rails.filter((r) => r.network === 'testnet');
          const candidates = testnet.filter((r) => (!body.chain || r.chain === body.chain) && (!body.token || r.token === body.token));
          const rail = candidates.find((r) => r.token === 'USDC') ?? candidates[0];
          if (!rail) {
            throw badRequest(`no testnet rail matches ${body.chain ?? '*'}:testnet:${body.token ?? '*'}; choose one from GET /v1/payment_methods`);
          }
          // default: 1 USDC, or a hundred times the rail's minimum
          const expected = body.amount === undefined
            ? (rail.token === 'USDC' ? toSubunits(1, rail.decimals) : toSubunits(rail.min_amount, rail.decimals) * 100n)
            : parseAmount(body.amount, rail);
          if (expected > toSubunits(DEMO_AMOUNT_MAX, rail.decimals)) throw badRequest(`demo sessions take at most ${DEMO_AMOUNT_MAX} ${rail.token}`);
          const expiresMs = parseExpiresIn(body.expires_in ?? DEMO_DEFAULT_EXPIRES_IN, DEMO_EXPIRES_IN_MAX_MS, '1h');
          const session = await newSession(ctx, {
            merchant_id: DEMO_MERCHANT_ID, sandbox: true, demo: true, environment: 'demo', rail, expected, expiresMs, metadata: {},
          });
          created(ctx, `/v1/payment_sessions/${session.id}`);
          return presentSession(session, rt);
        },
      },

      /** GET /v1/payment_sessions/{session_id}: the owner's key; demo sessions without credentials. */
      get: {
        async handler(ctx: Context<{ params: { session_id: string } }>) {
          const s = await current(ctx, await readableSession(ctx, ctx.params.params?.session_id));
          return presentSession(s, rt, await processedBlock(rt, s));
        },
      },

      /** GET /v1/payment_sessions: the caller's sessions, newest first; `status` filter, cursor paging. */
      list: {
        async handler(ctx: Context<{ query?: Record<string, string> }>) {
          const caller = (ctx.meta as { user?: Caller }).user;
          if (caller?.kind !== 'merchant') throw unauthorized();
          const query = validate<{ cursor?: string; limit?: string; status?: string }>('PaymentSessionListQuery', ctx.params.query ?? {}, 'query');
          const limit = parseLimit(query.limit);
          if (typeof limit === 'string') throw badRequest(limit);
          const filter: Record<string, string | { $lt: string }> = { merchant_id: caller.merchant_id };
          if (query.status) filter.status = query.status;
          if (query.cursor !== undefined) {
            const after = decodeCursor(query.cursor);
            if (!after) throw badRequest('cursor is not valid; pass the next_cursor of the previous page unchanged');
            filter.id = { $lt: after };
          }
          const rows = await rt.store.find<PaymentSessionState & Doc>('payment_sessions', filter, { desc: true, limit: limit + 1 });
          const page = rows.slice(0, limit);
          const more = rows.length > limit;
          return { data: page.map((r) => presentSession(r, rt)), has_more: more, next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
        },
      },

      /** POST /v1/payment_sessions/{session_id}/simulate */
      simulate: {
        async handler(ctx: Context<{ params: { session_id: string } }>) {
          const caller = (ctx.meta as Meta).user ?? null;
          const callerId = caller?.kind === 'merchant' ? caller.merchant_id : null;
          const id = ctx.params.params?.session_id;
          const s = typeof id === 'string' ? await store.get<PaymentSessionState>('payment_sessions', id) : null;
          if (!s) throw notFound('payment session');
          if (!s.demo && callerId !== null && callerId !== s.merchant_id) {
            // another merchant's session: as unknown as on GET, and still an attempt on a non-demo session
            signal('simulation_abuse', 'blocked_non_demo', s.environment, s);
            throw notFound('payment session');
          }
          const reply = await send(ctx, s.id, { type: 'simulate', caller_merchant_id: callerId });
          if (reply.refused === 'blocked_non_demo') {
            signal('simulation_abuse', 'blocked_non_demo', s.environment, s);
            throw forbidden(s.sandbox
              ? 'simulate on a sandbox session needs the owning merchant\'s X-API-Key'
              : 'simulate works only on demo sessions and sandbox sessions; a live session completes with an on-chain payment');
          }
          if (reply.refused === 'blocked_non_pending') {
            signal('simulation_abuse', 'blocked_non_pending', s.environment, s);
            throw conflict(`the session is ${reply.session.status}; simulate completes only pending or partially paid sessions`);
          }
          return presentSession(reply.session, rt);
        },
      },

      /** Internal, for chain listeners and diagnostics: the session holding a deposit address. */
      byAddress: {
        visibility: 'public',
        async handler(ctx: Context<{ chain: string; network: string; address: string }>) {
          const { chain, network, address } = ctx.params;
          return store.findOne<PaymentSessionState>('payment_sessions', { address, chain, network });
        },
      },
    },

    created() {
      const seed = loadSeedPhrase(config.dataDir);
      deriver = new AddressDeriver(seed.phrase);
      workers = new AddressWorkers(seed.phrase);
      if (seed.source === 'created') this.logger.info(`created a new testnet seed in ${config.dataDir}/seed (key fingerprint ${deriver.fingerprint}); set SEED_MNEMONIC to use your own`);
      if (seed.source !== 'env' && config.rails.some((r) => r.network === 'mainnet')) {
        this.logger.warn('mainnet rails are enabled but deposit addresses come from the generated seed in DATA_DIR: set SEED_MNEMONIC from your own key management');
      }
    },

    async stopped() {
      await workers?.close();
    },
  } as ServiceSchema;
}
