/**
 * The HTTP gateway (moleculer-web): /v1 routes from services/routes, credentials, the per-merchant rate
 * limit, JSON-only bodies with a size limit, a request id on every answer and in its log line, and every
 * error in the spec's envelope (lib/core/errors.ts).
 * moleculer-web picks the node before parsing params, so routes call facade actions, never actors.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { bodyErrorMessage } from '../lib/core/json-body.ts';
import { jsonBodyReader } from '../lib/http/body-reader.ts';
import { mayReadMetrics } from '../lib/ops/metrics-access.ts';
import { clientAddress, clientBucket, trustedProxyList } from '../lib/core/client-address.ts';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import ApiGateway from 'moleculer-web';
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { REMEDIATION, ServiceError, unauthorized } from '../lib/core/errors.ts';
import { toEnvelope } from '../lib/http/envelope.ts';
import { REQUEST_ID_HEADER, accessLine, requestIdFor } from '../lib/http/request-id.ts';
import { API_KEY_PATTERN, keyHash, resolveApiKey, resolveBearer } from '../lib/http/auth.ts';
import { AuthCache } from '../lib/core/auth-cache.ts';
import { limitInStore } from '../lib/core/rate-limit.ts';
import { openapiPath } from '../lib/http/validation.ts';
import { opsHasher } from '../lib/ops/hash.ts';
import { nodeAlerts, requestContext } from '../lib/ops/alerts/index.ts';
import { ROUTES } from './routes/index.ts';
import type { AuthMode, Caller } from './routes/types.ts';

type Req = IncomingMessage & {
  $action?: { name: string };
  $alias?: { method: string; fullPath: string };
  /** set first thing for every request (rootCallOptions) */
  $requestId?: string;
  headers: Record<string, string | undefined>;
};

const METHODS = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']);

/** HTTP metrics by route template (never the raw path: ids would make a series per session). */
function httpMetrics(rt: Runtime) {
  return (req: Req, res: ServerResponse, next: () => void) => {
    const t0 = performance.now();
    res.once('close', () => {
      const method = METHODS.has(req.method ?? '') ? req.method! : 'OTHER';
      const labels = { method, route: req.$alias ? req.$alias.fullPath : 'unmatched', status: String(res.statusCode) };
      rt.metrics.httpRequests.inc(labels);
      rt.metrics.httpDuration.observe(labels, (performance.now() - t0) / 1000);
    });
    next();
  };
}

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

/** Which merchant an API key belongs to, cached per key hash (lib/core/auth-cache.ts). */
interface KeyAuth {
  key_id: string;
  merchant_id: string;
}

/** The key is the merchant's active one, or its previous one within the rotation overlap. */
function keyStillValid(
  m: { active_key_id?: string; previous_key_id?: string | null; previous_api_key_expires_at?: string | null },
  keyId: string,
  now: Date,
): boolean {
  if (m.active_key_id === keyId) return true;
  return m.previous_key_id === keyId && !!m.previous_api_key_expires_at && m.previous_api_key_expires_at > now.toISOString();
}

/** The request's id, making one for a request that reached no handler of ours (Node's own parser errors). */
function requestIdOf(req: IncomingMessage, res?: ServerResponse): string {
  const r = req as Req;
  if (!r.$requestId) {
    r.$requestId = requestIdFor(req.headers['x-request-id']);
    if (res && !res.headersSent) res.setHeader(REQUEST_ID_HEADER, r.$requestId);
  }
  return r.$requestId;
}

/** The 401 of a route: its remediation names the credentials the route takes. */
function denied(mode: AuthMode): ServiceError {
  if (mode === 'key-or-bearer') return unauthorized(REMEDIATION.apiKeyOrBearer);
  if (mode === 'bearer-optional')
    return unauthorized(
      'Send a valid operator-issued bearer token in Authorization: Bearer <token>, or none to register a sandbox merchant.',
    );
  return unauthorized();
}

/** What fixes a body the JSON reader refused (lib/core/json-body.ts). */
function bodyRemediation(message: string): string {
  if (/Content-Encoding/.test(message))
    return 'Send the body uncompressed, or compressed as its Content-Encoding says (gzip, deflate or br).';
  if (/nest deeper/.test(message)) return 'Send objects and arrays nested at most 32 levels deep.';
  if (/number/.test(message)) return 'Send a number a JSON double carries exactly, or the amount as a digit string (amount_subunits).';
  return REMEDIATION.json;
}

/** Answers `err` in the envelope; returns the status sent. */
function sendEnvelope(req: IncomingMessage, res: ServerResponse, err: unknown): number {
  const e = err as { status?: number; statusCode?: number; type?: string; code?: unknown };
  // body-parser errors carry `status`; map them to our wording
  let mapped: unknown = err;
  const bodyError = bodyErrorMessage(err);
  if ((typeof e?.type === 'string' && e.type.startsWith('entity.')) || (typeof e?.code !== 'number' && (e?.status || e?.statusCode))) {
    const status = e.type === 'entity.too.large' ? 413 : (e.status ?? e.statusCode ?? 400);
    const message =
      e.type === 'entity.parse.failed'
        ? 'request body is not valid JSON'
        : e.type === 'entity.too.large'
          ? 'request body is too large'
          : 'bad request, check the body';
    mapped = new ServiceError(status, message, 'BAD_REQUEST', status === 413 ? undefined : { remediation: REMEDIATION.json });
  }
  if (bodyError) mapped = new ServiceError(400, bodyError, 'BAD_REQUEST', { remediation: bodyRemediation(bodyError) });
  if (e?.type === 'SERVICE_NOT_FOUND' || e?.type === 'SERVICE_NOT_AVAILABLE')
    mapped = new ServiceError(503, 'service temporarily unavailable', 'UNAVAILABLE');
  const { status, body } = toEnvelope(mapped, requestIdOf(req, res));
  if (res.headersSent) {
    res.end();
    return status;
  }
  // with its length, the answer goes out in one plain write (without it, writeHead chose chunked framing)
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
  return status;
}

// first thing for every request: its id (a sane X-Request-Id of the caller's, else a fresh one), sent
// back on every answer and written in the request's one log line when it ends: at info (an explained
// 503 at warn, a 5xx at error). A line costs about 10 µs with Moleculer's console logger (measured);
// LOG_LEVEL=warn keeps only the failures that need an operator
function stampRequest(
  this: { logger: { info(m: string): void; warn(m: string): void; error(m: string): void } },
  options: Record<string, unknown>,
  req: Req,
  res: ServerResponse,
) {
  const id = requestIdFor(req.headers['x-request-id'] ?? req.headers['x-correlation-id']);
  req.$requestId = id;
  options.requestID = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  const t0 = performance.now();
  const logger = this.logger;
  res.once('close', () => {
    const line = accessLine({
      requestId: id,
      method: METHODS.has(req.method ?? '') ? req.method! : 'OTHER',
      route: req.$alias ? req.$alias.fullPath : 'unmatched',
      status: res.statusCode,
      ms: performance.now() - t0,
      finished: res.writableFinished,
    });
    if (res.statusCode >= 500 && res.statusCode !== 503) logger.error(line);
    else if (res.statusCode === 503) logger.warn(line);
    else logger.info(line);
  });
}

/**
 * Before every routed call: only the operation's own method, the hashed client and the few headers actions read
 * in ctx.meta, and JSON bodies only.
 */
function describeRequest(hasher: ReturnType<typeof opsHasher>, proxies: ReturnType<typeof trustedProxyList>) {
  return (ctx: Context, _route: unknown, req: Req) => {
    // moleculer-web resolves OPTIONS as GET, or as its Access-Control-Request-Method: only the
    // operation's own method may run its action (no CORS here; a preflight changes nothing)
    if (req.$alias && req.method !== req.$alias.method)
      throw new ServiceError(405, `${req.method} is not allowed here`, 'METHOD_NOT_ALLOWED');
    // keyed hashes, never raw: per-client limits and alerts must not store IPs (lib/ops/hash.ts)
    const credentials: string[] = [];
    if (req.headers['x-api-key'] !== undefined) credentials.push('headers.x-api-key');
    if (req.headers.authorization !== undefined) credentials.push('headers.authorization');
    // the two hashes are computed when an action or an alert reads them (most requests never do)
    let ipHash: string | undefined;
    let uaHash: string | undefined;
    (ctx.meta as Record<string, unknown>).client = {
      get ip_hash() {
        return (ipHash ??= hasher.hash(clientBucket(clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], proxies))));
      },
      get user_agent_hash() {
        return (uaHash ??= hasher.hash(req.headers['user-agent'] ?? ''));
      },
      route: req.$alias ? `${req.$alias.method} ${req.$alias.fullPath}` : undefined,
      credentials,
    };
    // the few request headers actions read: Idempotency-Key (creates), X-Merchant-Id (bearer callers),
    // If-None-Match (receipts), Last-Event-ID (the event stream's resume point), Accept (the checkout's 404),
    // the x402 proof headers (a catalog price bought with x402)
    (ctx.meta as Record<string, unknown>).headers = {
      'idempotency-key': req.headers['idempotency-key'],
      'x-merchant-id': req.headers['x-merchant-id'],
      'if-none-match': req.headers['if-none-match'],
      'last-event-id': req.headers['last-event-id'],
      accept: req.headers.accept,
      'payment-signature': req.headers['payment-signature'],
      'x-service-payment': req.headers['x-service-payment'],
      'x-payment': req.headers['x-payment'],
    };
    if (!BODY_METHODS.has(req.method ?? '')) return;
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (hasBody && type !== 'application/json')
      throw new ServiceError(415, 'Content-Type must be application/json', 'UNSUPPORTED_MEDIA_TYPE');
  };
}

/** A request Node's parser refused (headers over the limit, malformed) still gets the envelope. */
function answerUnparsed(err: NodeJS.ErrnoException, socket: Duplex, logger: { info(m: string): void }): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  // Node's parser refused the request before any header was read: the id is always a fresh one
  const requestId = requestIdFor(undefined);
  const { status, body } = toEnvelope(
    new ServiceError(tooLarge ? 431 : 400, tooLarge ? 'request headers are too large' : 'malformed HTTP request', 'BAD_REQUEST', {
      remediation: tooLarge
        ? 'Send fewer or shorter headers (at most 16 KB in all).'
        : 'Send a well-formed HTTP/1.1 request (request line, headers, and a body matching its Content-Length or chunked framing).',
    }),
    requestId,
  );
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n${REQUEST_ID_HEADER}: ${requestId}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
  logger.info(accessLine({ requestId, method: 'OTHER', route: 'unparsed', status, ms: 0, finished: true }));
}

/**
 * Closes the HTTP server: an open event stream (or a client that keeps reusing its keep-alive socket) would
 * hold close() forever, so requests in flight get a grace period, then what is left is dropped.
 */
function closeGracefully(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), 2000);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
  });
}

/** The gateway service as its handlers see it: moleculer-web adds the HTTP server. */
type Gateway = Service & {
  server?: Server;
  /** moleculer-web's, set up in its created() */
  routes?: Array<{ opts: { autoAliases?: boolean } }>;
  regenerateAllAutoAliases?: () => void;
};

/**
 * The gateway's `authenticate`: resolves the caller by the route's mode (an API key, a bearer token, or
 * none) and counts it against its per-minute limit.
 */
function authenticator(
  rt: Runtime,
  authByAction: Map<string, AuthMode>,
  authCache: AuthCache<KeyAuth>,
  alerts: ReturnType<typeof nodeAlerts>,
) {
  /** Refuses a caller over its per-minute limit (one count across every node), with its metric and alert. */
  async function overLimit(
    logger: Gateway['logger'],
    ctx: Context,
    req: Req,
    scope: 'merchant' | 'bearer',
    id: string,
    perMinute: number,
    environment: 'sandbox' | 'live',
    who: { merchant_id: string } | { agent_id: string },
  ): Promise<void> {
    const refused = await limitInStore(rt.store, scope, id, perMinute, rt.now()).then(
      () => null,
      (e: unknown) => e,
    );
    if (!refused) return;
    rt.metrics.signal({ signal: 'limit_violation', outcome: 'rate_limited', environment });
    await alerts.report(
      {
        kind: 'limit',
        merchant_id: 'merchant_id' in who ? who.merchant_id : null,
        source: (ctx.meta as { client: { ip_hash: string } }).client.ip_hash,
      },
      requestContext(
        rt,
        { requestID: ctx.requestID, meta: ctx.meta, params: (req as Req & { $params?: unknown }).$params },
        { ...who, environment, last_error_code: 'rate_limited' },
      ),
      logger,
    );
    throw refused;
  }

  return async function authenticate(this: Gateway, ctx: Context, _route: unknown, req: Req): Promise<Caller> {
    const mode = authByAction.get(req.$action?.name ?? '') ?? 'key';
    const unauthorized = () => denied(mode);
    const apiKey = req.headers['x-api-key'];
    const bearerHeader = req.headers.authorization;
    if (mode === 'none') return null;
    if (apiKey !== undefined && mode !== 'bearer-optional') {
      if (!API_KEY_PATTERN.test(apiKey)) throw unauthorized();
      const hash = keyHash(apiKey);
      // which merchant a key belongs to never changes: cached; whether it is still valid and the
      // merchant's limit are read fresh from the merchant on every request, so a revocation, a
      // rotation or a new limit holds on every node at once without waiting for any message
      let auth = authCache.get(hash);
      if (!auth) {
        const generation = authCache.generation;
        const key = await resolveApiKey(rt.store, apiKey, rt.now());
        if (!key) throw unauthorized();
        auth = { key_id: key.id, merchant_id: key.merchant_id };
        authCache.set(hash, key.merchant_id, auth, generation);
      }
      const merchant = await rt.store.get<{
        id: string;
        sandbox: boolean;
        rate_limit_per_minute: number;
        active_key_id?: string;
        previous_key_id?: string | null;
        previous_api_key_expires_at?: string | null;
        kyc_status?: string;
        rail_policy?: object | null;
      }>('merchants', auth.merchant_id);
      if (!merchant || !keyStillValid(merchant, auth.key_id, rt.now())) {
        authCache.dropMerchant(auth.merchant_id);
        throw unauthorized();
      }
      // one count per merchant across every node: an atomic counter in the store (lib/core/rate-limit.ts)
      const environment = merchant.sandbox ? 'sandbox' : 'live';
      await overLimit(this.logger, ctx, req, 'merchant', merchant.id, merchant.rate_limit_per_minute, environment, {
        merchant_id: merchant.id,
      });
      return {
        kind: 'merchant',
        merchant_id: merchant.id,
        sandbox: merchant.sandbox,
        key_id: auth.key_id,
        standing: { kyc_status: merchant.kyc_status, rail_policy: merchant.rail_policy ?? null },
      };
    }
    if (bearerHeader !== undefined && (mode === 'key-or-bearer' || mode === 'bearer-optional')) {
      const user = await resolveBearer(rt.store, bearerHeader);
      if (!user) throw unauthorized();
      // a bearer user gets the default merchant limit, counted per user
      await overLimit(this.logger, ctx, req, 'bearer', user.id, rt.config.rateLimitPerMinute, 'live', { agent_id: user.id.slice(0, 24) });
      return { kind: 'bearer', user_id: user.id, email: user.email };
    }
    if (mode === 'optional' || mode === 'bearer-optional') return null;
    throw unauthorized();
  };
}

export function createApiService(rt: Runtime): ServiceSchema {
  const authByAction = new Map<string, AuthMode>(ROUTES.map((r) => [r.action, r.auth]));
  const aliases: Record<string, string> = {};
  for (const r of ROUTES) aliases[`${r.method} ${r.path}`] = r.action;
  aliases['GET /openapi.json'] = 'api.openapi';
  authByAction.set('api.openapi', 'key');
  const serveMetricsHere = rt.config.metricsPort === null;
  const hasher = opsHasher(rt.keyring);
  const proxies = trustedProxyList(rt.config.trustedProxies);
  const alerts = nodeAlerts(rt);
  const external = (rt.store as { externalVersion?: () => number }).externalVersion;
  const authCache = new AuthCache<KeyAuth>({
    ttlMs: rt.config.authCacheTtlMs,
    externalVersion: external ? () => external.call(rt.store) : undefined,
  });
  let metricsServer: Server | null = null;

  async function metricsHandler(req: IncomingMessage, res: ServerResponse) {
    if (!mayReadMetrics(req, rt.config.metricsToken, serveMetricsHere)) {
      return sendEnvelope(req, res, unauthorized('Send the METRICS_TOKEN setting as Authorization: Bearer <token>.')); // README: Security, metrics
    }
    const text = await rt.metrics.registry.metrics();
    res.writeHead(200, { 'Content-Type': rt.metrics.registry.contentType });
    res.end(text);
  }

  // moleculer-web's settings (its published types lack some that it honours, such as rootCallOptions as a function)
  const settings: ServiceSettingSchema & Record<string, unknown> = {
    port: rt.config.port,
    ip: rt.config.host,
    path: '',
    logRequest: null,
    logResponse: null,
    logRequestParams: null,
    logResponseData: null,
    log4XXResponses: false,
    rootCallOptions: stampRequest,
    routes: [
      ...(serveMetricsHere
        ? [
            {
              path: '/metrics',
              authentication: false,
              mappingPolicy: 'restrict',
              aliases: { 'GET /': metricsHandler },
              bodyParsers: false,
            },
          ]
        : []),
      {
        path: '',
        mappingPolicy: 'restrict',
        mergeParams: false,
        authentication: true,
        // JSON bodies only, exact numbers and bounded nesting: body-parser's json middleware behind a fast
        // path (lib/http/body-reader.ts), first, where moleculer-web would put its body parsers
        use: [jsonBodyReader(rt.config.bodyLimit), httpMetrics(rt)],
        bodyParsers: false,
        aliases,
        onBeforeCall: describeRequest(hasher, proxies),
        onError(req: IncomingMessage, res: ServerResponse, err: unknown) {
          sendEnvelope(req, res, err);
        },
      },
    ],
    onError(req: IncomingMessage, res: ServerResponse, err: unknown) {
      sendEnvelope(req, res, err);
    },
  };

  return {
    name: 'api',
    mixins: [ApiGateway],
    settings,
    actions: {
      /** A merchant's credentials or limits changed (merchant-actors): forget what is cached about them. */
      authChanged: {
        visibility: 'public',
        handler(ctx: Context<{ merchant_id: string }>) {
          authCache.dropMerchant(ctx.params.merchant_id);
          return true;
        },
      },
      openapi: {
        visibility: 'published',
        handler(ctx: Context) {
          (ctx.meta as Record<string, unknown>).$responseType = 'application/json';
          return readFileSync(openapiPath(), 'utf8');
        },
      },
    },
    methods: {
      /** moleculer-web's hook for a failed request: the cause of a 5xx is logged with the request id (the client sees only the id). */
      errorHandler(this: { logger: { error(m: string): void } }, req: Req, res: ServerResponse, err: unknown) {
        if (sendEnvelope(req, res, err) < 500) return;
        const e = err as { name?: unknown; type?: unknown; message?: unknown; stack?: unknown } | null;
        // a condition explained to the client (no fresh rate, a chain node down) is known, not a fault: its
        // access line says enough; anything else is logged with its cause
        if (e?.type === 'UNAVAILABLE_EXPLAINED') return;
        this.logger.error(
          `request error request_id=${requestIdOf(req)}: ${String(e?.name)}: ${String(e?.message)}\n${String(e?.stack ?? '')}`,
        );
      },
      /** Resolves the caller; the route's mode decides what is required. */
      authenticate: authenticator(rt, authByAction, authCache, alerts),
    },
    created(this: Gateway) {
      // moleculer-web (whose created() ran first) answers every $services.changed with a regeneration of
      // autoAliases routes after a 500 ms debounce: none of ours has them, so all it did was broadcast
      // $api.aliases.regenerated, which nothing hears, to every node, and its timer held a stopped broker's
      // process open for up to half a second (a jest worker past its exit deadline)
      if (!this.routes?.some((r) => r.opts.autoAliases)) this.regenerateAllAutoAliases = () => {};
      // a client that stops reading a streamed response (an event-stream reader leaving, a cut download) is
      // ordinary: moleculer-web warns with a stack trace for each one, a line per closed stream; a debug line here
      const warn = this.logger.warn.bind(this.logger);
      this.logger.warn = (...args: unknown[]) => {
        const meta = args[1] as { err?: { code?: unknown }; url?: unknown } | undefined;
        if (args[0] === 'Stream got an error.' && meta?.err?.code === 'ERR_STREAM_PREMATURE_CLOSE')
          return this.logger.debug(`stream closed by the client before its end: ${String(meta.url)}`);
        return warn(...args);
      };
    },
    started(this: Gateway) {
      const server = this.server;
      server?.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerUnparsed(err, socket, this.logger));
      if (!serveMetricsHere) {
        metricsServer = createServer((req, res) => {
          requestIdOf(req, res);
          if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics')
            metricsHandler(req, res).catch((e) => sendEnvelope(req, res, e));
          else sendEnvelope(req, res, new ServiceError(404, 'not found', 'NOT_FOUND'));
        });
        metricsServer.listen(rt.config.metricsPort!, rt.config.host);
      }
    },
    /** runs before moleculer-web's own stopped, which then finds the server closed */
    async stopped(this: Gateway) {
      metricsServer?.close();
      const server = this.server;
      if (!server?.listening) return;
      await closeGracefully(server);
    },
  };
}
