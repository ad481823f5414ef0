/**
 * Spot rates (facade): GET /v1/rates, public. Optional `base` (an enabled token) and `quote` (default USD);
 * without `base`, every enabled token. The engine (lib/rates/engine.ts) decides sources, cache and
 * staleness; this service validates, limits per client and presents. It also keeps the shared cache warm
 * for the enabled tokens, so that a completing session finds a rate to record without a network call.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { clientHash, requestMeta } from '../lib/core/request-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { badRequest, rateLimited, unavailable } from '../lib/core/errors.ts';
import { RatesEngine, RateUnavailableError, type RateView } from '../lib/rates/engine.ts';

export const DEFAULT_QUOTE = 'USD';

/** What fixes a pair that no source can price: a setting (no retry helps), or time (a source failed now). */
function noRate(message: string, retryable: boolean) {
  return unavailable(message, {
    retryable,
    remediation: retryable
      ? 'Send the same request again shortly: a configured rate source failed or its last value is too old.'
      : 'Configure a rate source for the pair: RATES_STATIC (e.g. ETH:USD=3000, for sandbox), RATES_HTTP_URL, or a Chainlink feed with ETHEREUM_MAINNET_RPC_URL; RATE_SOURCES orders them.',
  });
}

export function createRatesService(rt: Runtime): ServiceSchema {
  const engine = new RatesEngine(rt.store, rt.config, () => rt.now());
  const tokens = [...new Set(rt.config.rails.map((r) => r.token))];
  let timer: NodeJS.Timeout | null = null;
  // a pair without any source is a setting, not an incident: said once per process, not per request
  const told = new Set<string>();
  const tell = (log: { warn(...a: unknown[]): void }, e: RateUnavailableError) => {
    if (e.retryable || told.has(`${e.base}:${e.quote}`)) return;
    told.add(`${e.base}:${e.quote}`);
    log.warn(`no rate source is configured for ${e.base}/${e.quote}: GET /v1/rates answers 503 for it (set RATES_STATIC or RATE_SOURCES)`);
  };

  async function warm(log: { debug(...a: unknown[]): void; warn(...a: unknown[]): void }) {
    for (const t of tokens) {
      await engine.rate(t, DEFAULT_QUOTE).catch((e) => {
        if (e instanceof RateUnavailableError) tell(log, e);
        log.debug(`rate ${t}/${DEFAULT_QUOTE}: ${(e as Error).message}`);
      });
    }
  }

  return {
    name: 'rates',
    actions: {
      /** GET /v1/rates */
      list: {
        async handler(ctx: Context<{ query?: unknown }>) {
          const ip = clientHash(ctx);
          // rates are cached, so a client may poll; still bounded per client
          const limit = rt.config.publicRateLimitPerMinute * 4;
          if ((await rt.store.increment(`public:rates:${ip}`, 1, 60_000, rt.now())) > limit) {
            throw rateLimited(`too many rate requests from this client (at most ${limit} a minute); retry in a minute`);
          }
          const q = validate('RatesQuery', ctx.params.query ?? {}, 'query');
          const base = q.base?.toUpperCase();
          const quote = (q.quote ?? DEFAULT_QUOTE).toUpperCase();
          if (base && !tokens.includes(base as never)) {
            throw badRequest(`base must be the token of an enabled rail (${tokens.join(', ')}); see GET /v1/payment_methods`);
          }
          const data: RateView[] = [];
          const missing: Array<{ base: string; quote: string; message: string }> = [];
          let retryable = false;
          for (const b of base ? [base] : tokens) {
            try {
              data.push(await engine.rate(b, quote));
            } catch (e) {
              if (!(e instanceof RateUnavailableError)) throw e;
              tell(this.logger, e);
              retryable ||= e.retryable;
              missing.push({ base: b, quote, message: e.message });
            }
          }
          // a number is never invented: nothing fresh enough is a 503 that says why
          if (data.length === 0) throw noRate(missing.map((m) => m.message).join('; '), retryable);
          requestMeta(ctx).$responseHeaders = { 'Cache-Control': 'public, max-age=10' };
          return {
            data: data.map((r) => ({ base: r.base, quote: r.quote, rate: r.rate, source: r.source, as_of: r.as_of, stale: r.stale })),
            ...(missing.length ? { unavailable: missing } : {}),
          };
        },
      },
    },
    started() {
      const log = this.logger;
      warm(log);
      timer = setInterval(() => warm(log), Math.max(5_000, rt.config.rates.cacheTtlMs));
      timer.unref();
    },
    stopped() {
      if (timer) clearInterval(timer);
    },
  };
}
