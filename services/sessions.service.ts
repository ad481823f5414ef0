/**
 * Payment sessions (facade): validate, authorize, call the rules of lib/sessions/, send the session actor
 * (services/session-actors.service.ts) its messages, present. The order of the creation checks is in
 * lib/sessions/policy.ts; bad input never changes the store.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { created } from './http-meta.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { validate } from '../lib/http/validation.ts';
import { forbidden, notFound, conflict, unauthorized } from '../lib/core/errors.ts';
import { idempotencyKey } from '../lib/core/idempotency.ts';
import { limitInStore } from '../lib/core/rate-limit.ts';
import { clientHash, merchantCaller, requestMeta, type RequestContext } from '../lib/core/request-meta.ts';
import type { AbuseLabels, AbuseOutcome, AbuseSignal, Environment } from '../lib/runtime/metrics.ts';
import { ethereumProcessedBlock } from '../lib/chains/cursor.ts';
import { AddressWorkers } from '../lib/addresses/workers.ts';
import { AddressPool } from '../lib/addresses/pool.ts';
import { AddressDeriver, AddressIndexAllocator, loadSeedPhrase, type AddressChain } from '../lib/addresses/addresses.ts';
import { PolicyRefusal, decideDemo, environmentOf, refuseCreateBody, type CreateBody } from '../lib/sessions/policy.ts';
import { Sessions, type SessionCalls } from '../lib/sessions/create.ts';
import { RatesEngine } from '../lib/rates/engine.ts';
import { presentSession } from '../lib/sessions/presenter.ts';
import { readAccess, simulateHidden } from '../lib/sessions/access.ts';
import { listSessions } from '../lib/sessions/list.ts';
import { sessionExpiryMixin } from '../mixins/session-expiry.mixin.ts';
import { nodeAlerts, requestContext } from '../lib/ops/alerts/index.ts';
import { DEMO_MERCHANT_ID, type PaymentSessionState } from '../lib/sessions/payment-session.ts';
import { refundedBySession } from '../lib/refunds/model.ts';
import { sendToActor } from '../mixins/actor-host.mixin.ts';

type SessionParams = { params: { session_id: string } };
type Logger = { info(m: string): void; warn(m: string): void };

/** Abuse signals of the sessions API: the metric, and for limit violations the alert. */
function abuseSignals(rt: Runtime, alerts: ReturnType<typeof nodeAlerts>) {
  /** The metric, and for limit violations the alert (awaited: the alert is stored before the 4xx answers). */
  async function signal(
    signal: AbuseSignal,
    outcome: AbuseOutcome,
    environment: Environment,
    rail?: { chain: string; network: string; token: string },
    at?: { ctx: Context; merchant_id: string | null; session_id?: string },
  ) {
    rt.metrics.signal({
      signal,
      outcome,
      environment,
      chain: rail?.chain as AbuseLabels['chain'],
      network: rail?.network as AbuseLabels['network'],
      token: rail?.token as AbuseLabels['token'],
    });
    if (signal !== 'limit_violation' || !at) return;
    const ctxInfo = requestContext(rt, at.ctx, {
      merchant_id: at.merchant_id,
      environment,
      chain: rail?.chain,
      network: rail?.network,
      session_id: at.session_id,
      last_error_code: outcome,
    });
    await alerts.report(
      { kind: 'limit', merchant_id: at.merchant_id, source: ctxInfo.source_ip_hash ?? 'unknown' },
      ctxInfo,
      at.ctx.service?.logger,
    );
  }

  /** Counts a refusal that is an abuse signal, then lets it reach the client. */
  async function countRefusal<T>(ctx: Context, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      const caller = merchantCaller(ctx);
      if (e instanceof PolicyRefusal && caller)
        await signal(e.signal, e.outcome, environmentOf(caller.sandbox), e.rail, { ctx, merchant_id: caller.merchant_id });
      throw e;
    }
  }

  return { signal, countRefusal };
}

/**
 * POST /v1/payment_sessions/{session_id}/simulate: completes a demo or sandbox session without a chain.
 * Every call counts towards simulation_abuse (per merchant and per session); a refused non-demo call
 * alerts at once.
 */
async function simulate(
  rt: Runtime,
  d: {
    load: (id: unknown) => Promise<PaymentSessionState | null>;
    send: SessionCalls['send'];
    alerts: ReturnType<typeof nodeAlerts>;
    signal: ReturnType<typeof abuseSignals>['signal'];
    present: (s: PaymentSessionState) => Promise<unknown>;
  },
  ctx: RequestContext<SessionParams>,
  logger: Logger,
) {
  const callerId = merchantCaller(ctx)?.merchant_id ?? null;
  const s = await d.load(ctx.params.params?.session_id);
  if (!s) throw notFound('payment session');
  // every call counts towards simulation_abuse (per merchant and per session); refused non-demo calls alert at once
  const report = (nonDemo: boolean) =>
    d.alerts.report(
      { kind: 'simulate', merchant_id: s.demo ? null : s.merchant_id, session_id: s.id, non_demo: nonDemo },
      requestContext(rt, ctx, {
        merchant_id: s.demo ? null : s.merchant_id,
        environment: s.environment,
        chain: s.chain,
        network: s.network,
        session_id: s.id,
        last_error_code: nonDemo ? 'blocked_non_demo' : null,
      }),
      logger,
    );
  if (simulateHidden(s, callerId)) {
    await report(true);
    // anonymous or another merchant's: as unknown as on GET, and still an attempt on a non-demo session
    void d.signal('simulation_abuse', 'blocked_non_demo', s.environment, s);
    throw notFound('payment session');
  }
  const reply = await d.send(s.id, { type: 'simulate', caller_merchant_id: callerId });
  await report(reply.refused === 'blocked_non_demo');
  if (reply.refused === 'blocked_non_demo') {
    void d.signal('simulation_abuse', 'blocked_non_demo', s.environment, s);
    throw forbidden(
      s.sandbox
        ? "simulate on a sandbox session needs the owning merchant's X-API-Key"
        : 'simulate works only on demo sessions and sandbox sessions; a live session completes with an on-chain payment',
      {
        remediation: s.sandbox
          ? 'Send the X-API-Key of the merchant that created this session.'
          : 'Pay a live session on chain; simulate only sandbox and demo sessions.',
      },
    );
  }
  if (reply.refused === 'blocked_non_pending') {
    void d.signal('simulation_abuse', 'blocked_non_pending', s.environment, s);
    throw conflict(`the session is ${reply.session.status}; simulate completes only pending or partially paid sessions`, {
      remediation: 'Create a new session to simulate another payment; this one is already settled.',
    });
  }
  return d.present(reply.session);
}

/** Deposit addresses for new sessions: derived ahead on worker threads, from the seed (warned about on mainnet). */
function addressPool(rt: Runtime, sessions: Sessions, logger: Logger): { workers: AddressWorkers; pool: AddressPool } {
  const seed = loadSeedPhrase(rt.config.dataDir);
  const deriver = new AddressDeriver(seed.phrase);
  const allocator = new AddressIndexAllocator(rt.store);
  const workers = new AddressWorkers(seed.phrase);
  // addresses derived ahead, in blocks of indexes reserved in the store (lib/addresses/pool.ts); the
  // first block on this thread, so that an idle node runs no worker thread
  const pool = new AddressPool(allocator, workers, { deriveInThread: (chain, index) => deriver.address(chain, index) });
  sessions.addresses = { fingerprint: deriver.fingerprint, allocate: (chain) => pool.take(chain as AddressChain) };
  if (seed.source === 'created')
    logger.info(
      `created a new testnet seed in ${rt.config.dataDir}/seed (key fingerprint ${deriver.fingerprint}); set SEED_MNEMONIC to use your own`,
    );
  if (seed.source !== 'env' && rt.config.rails.some((r) => r.network === 'mainnet')) {
    logger.warn(
      'mainnet rails are enabled but deposit addresses come from the generated seed in DATA_DIR: set SEED_MNEMONIC from your own key management',
    );
  }
  return { workers, pool };
}

export function createSessionsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  const sessions = new Sessions({
    store,
    config,
    keyring: rt.keyring,
    now: () => rt.now(),
    rates: new RatesEngine(store, config, () => rt.now()),
  });
  let workers: AddressWorkers;
  let pool: AddressPool;
  const present = (s: PaymentSessionState, processed?: number, refunded?: string) => presentSession(s, config, processed, refunded);
  /** the session with what its refunds took (one read; none for a session that cannot have refunds yet) */
  const presentWithRefunds = async (s: PaymentSessionState, processed?: number) =>
    present(s, processed, s.demo || s.received_subunits === '0' ? '0' : (await refundedBySession(store, [s.id])).get(s.id));
  const load = sessions.load;
  /** what a creation needs from the broker, for this request */
  const callsOf = (ctx: Context): SessionCalls => ({
    send: (id, msg) => sendToActor(ctx, 'session-actors', id, msg),
    checkReference: (args) => ctx.call('catalog.checkCheckoutReference', args),
    log: ctx.broker.logger,
  });

  const alerts = nodeAlerts(rt);
  const { signal, countRefusal } = abuseSignals(rt, alerts);

  async function create(ctx: RequestContext<{ body: unknown }>): Promise<PaymentSessionState> {
    const caller = callingMerchant(ctx);
    let body: CreateBody;
    try {
      body = validate('CreatePaymentSessionRequest', ctx.params.body);
    } catch (e) {
      // the schema's refusal, plus what the creation rules find wrong in the other fields: all at once
      refuseCreateBody(ctx.params.body, config.rails, e, { allowHttpReturnUrl: config.webhookAllowPrivate });
    }
    return sessions.create(callsOf(ctx), caller, body, idempotencyKey(requestMeta(ctx).headers?.['idempotency-key']));
  }

  return {
    name: 'sessions',
    // the expiry scanner runs wherever the sessions API runs
    mixins: [sessionExpiryMixin(rt)],
    actions: {
      /** POST /v1/payment_sessions */
      create: {
        async handler(ctx: RequestContext<{ body: unknown }>) {
          const s = await countRefusal(ctx, () => create(ctx));
          created(ctx, `/v1/payment_sessions/${s.id}`);
          return present(s);
        },
      },

      /** POST /v1/payment_sessions/demo: public; testnet rails only; limited per client. */
      createDemo: {
        async handler(ctx: RequestContext<{ body?: unknown }>) {
          await limitInStore(store, 'demo', clientHash(ctx), config.publicRateLimitPerMinute, rt.now());
          const raw = ctx.params.body;
          const body = validate('CreateDemoSessionRequest', raw === undefined || raw === null || raw === '' ? {} : raw);
          const s = await sessions.open(
            callsOf(ctx),
            { merchant_id: DEMO_MERCHANT_ID, sandbox: true, demo: true, environment: 'demo' },
            decideDemo(body, config.rails),
          );
          created(ctx, `/v1/payment_sessions/${s.id}`);
          return present(s);
        },
      },

      /** GET /v1/payment_sessions: the caller's sessions, newest first. */
      list: {
        async handler(ctx: RequestContext<{ query?: Record<string, string> }>) {
          const caller = callingMerchant(ctx);
          const page = await listSessions(store, caller.merchant_id, validate('PaymentSessionListQuery', ctx.params.query ?? {}, 'query'));
          const refunded = await refundedBySession(
            store,
            page.data.filter((s) => s.received_subunits !== '0').map((s) => s.id),
          );
          return {
            data: page.data.map((s) => present(s, undefined, refunded.get(s.id))),
            has_more: page.has_more,
            next_cursor: page.next_cursor,
          };
        },
      },

      /** GET /v1/payment_sessions/{session_id}: the owner's key; demo sessions without credentials. */
      get: {
        async handler(ctx: RequestContext<SessionParams>) {
          const found = await load(ctx.params.params?.session_id);
          const access = readAccess(found, requestMeta(ctx).user);
          if (access === 'not_found') throw notFound('payment session');
          if (access === 'unauthorized') throw unauthorized();
          const s = await sessions.current(callsOf(ctx), found!);
          const hasBlocks = s.chain === 'ethereum' && s.deposits.some((d) => d.block_number !== null);
          return presentWithRefunds(s, hasBlocks ? await ethereumProcessedBlock(store, s.network) : undefined);
        },
      },

      /** POST /v1/payment_sessions/{session_id}/simulate */
      simulate: {
        handler(ctx: RequestContext<SessionParams>) {
          return simulate(rt, { load, send: callsOf(ctx).send, alerts, signal, present: presentWithRefunds }, ctx, this.logger);
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
      ({ workers, pool } = addressPool(rt, sessions, this.logger));
    },

    started() {
      // derive the first addresses now, so that the first sessions do not wait for them
      for (const chain of new Set(config.rails.map((r) => r.chain as AddressChain))) void pool.warm(chain);
    },

    async stopped() {
      await pool?.stop();
      await workers?.close();
    },
  };
}
