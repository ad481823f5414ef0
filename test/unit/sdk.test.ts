/** Pure parts of the SDK (sdk/): retries, listen's forwarding, webhook signatures (against the service's signer), proof of work, SSE parsing, generated types. */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { retryingFetch } from '../../sdk/src/client.ts';
import { NetworkError, PaymentsError, RateLimitedError, ConflictError } from '../../sdk/src/errors.ts';
import { verifyWebhook, isValidWebhook, signatureHeader as sdkSign, WebhookVerificationError } from '../../sdk/src/webhooks.ts';
import { solvePow, powBits } from '../../sdk/src/pow.ts';
import { solvePowInWorker } from '../../sdk/src/pow-node.ts';
import { parseSse } from '../../sdk/src/sse.ts';
import { forwardRetryingRefused } from '../../sdk/src/cli/listen.ts';
import { signatureHeader as serviceSign } from '../../lib/webhooks/signature.ts';
import { verifyWebhook as serviceVerify } from '../../lib/webhooks/verify.ts';
import { verifyPow } from '../../lib/onboarding/pow.ts';

function fakeFetch(answers: Array<number | 'throw' | { status: number; retryAfter?: string }>) {
  const calls: Request[] = [];
  const fn = async (input: RequestInfo | URL) => {
    const req = input as Request;
    calls.push(req);
    const a = answers[Math.min(calls.length - 1, answers.length - 1)];
    if (a === 'throw') throw new TypeError('fetch failed');
    const { status, retryAfter } = typeof a === 'number' ? { status: a, retryAfter: undefined } : a;
    return new Response(JSON.stringify(status < 300 ? { ok: true } : { code: status === 429 ? 4 : 1, message: 'x' }), {
      status,
      headers: retryAfter ? { 'Retry-After': retryAfter } : {},
    });
  };
  return { calls, fn: fn as typeof fetch };
}

describe('retryingFetch', () => {
  const opts = { retryBaseMs: 1, maxRetries: 3 };
  it('retries idempotent calls on 429, 5xx and network failures, then answers', async () => {
    const f = fakeFetch([503, 'throw', 429, 200]);
    const res = await retryingFetch(f.fn, opts)(new Request('http://x/v1/me'));
    expect(res.status).toBe(200);
    expect(f.calls).toHaveLength(4);
  });
  it('gives up after maxRetries with the last answer', async () => {
    const f = fakeFetch([500]);
    const res = await retryingFetch(f.fn, opts)(new Request('http://x/v1/me'));
    expect(res.status).toBe(500);
    expect(f.calls).toHaveLength(4);
    const g = fakeFetch(['throw']);
    await expect(retryingFetch(g.fn, opts)(new Request('http://x/v1/me'))).rejects.toBeInstanceOf(NetworkError);
    expect(g.calls).toHaveLength(4);
  });
  it('never retries a POST without an Idempotency-Key; retries one with a key, body intact, honouring Retry-After', async () => {
    const plain = fakeFetch([503, 200]);
    const res = await retryingFetch(plain.fn, opts)(new Request('http://x/v1/payment_sessions/ps_1/simulate', { method: 'POST' }));
    expect(res.status).toBe(503);
    expect(plain.calls).toHaveLength(1);
    const keyed = fakeFetch([{ status: 429, retryAfter: '0' }, 502, 201]);
    const body = JSON.stringify({ amount: 1 });
    const r2 = await retryingFetch(
      keyed.fn,
      opts,
    )(new Request('http://x/v1/payment_sessions', { method: 'POST', body, headers: { 'Idempotency-Key': 'k1' } }));
    expect(r2.status).toBe(201);
    expect(keyed.calls).toHaveLength(3);
    for (const c of keyed.calls) expect(await c.text()).toBe(body);
    const failing = fakeFetch(['throw']);
    await expect(
      retryingFetch(failing.fn, opts)(new Request('http://x/v1/payment_sessions/ps_1/simulate', { method: 'POST' })),
    ).rejects.toBeInstanceOf(NetworkError);
    expect(failing.calls).toHaveLength(1);
  });
  it('does not retry an answer that says a retry cannot help (retryable: false)', async () => {
    const answers: Array<Record<string, unknown>> = [
      { code: 1, message: 'no rate for ETH/USD', retryable: false },
      { code: 1, message: 'source down', retryable: true },
    ];
    for (const [i, body] of answers.entries()) {
      let calls = 0;
      const f = (async () => {
        calls++;
        return new Response(JSON.stringify(body), { status: 503, headers: { 'Content-Type': 'application/json' } });
      }) as typeof fetch;
      const res = await retryingFetch(f, opts)(new Request('http://x/v1/rates?base=ETH'));
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual(body); // the body is still there for the caller
      expect(calls).toBe(i === 0 ? 1 : 4);
    }
  });
  it('names the URL it could not reach, and why', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    const f = (async () => {
      throw refused;
    }) as typeof fetch;
    const e = await retryingFetch(f, { maxRetries: 0 })(new Request('http://localhost:3999/v1/me?x=1')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NetworkError);
    expect((e as Error).message).toBe(
      'could not reach http://localhost:3999/v1/me (GET: ECONNREFUSED); is the service running there? (--base-url, PAYMENTS_BASE_URL)',
    );
  });
  it('maps envelopes to typed errors', () => {
    expect(PaymentsError.from(429, { code: 4, message: 'slow down' })).toBeInstanceOf(RateLimitedError);
    expect(PaymentsError.from(409, { code: 5, message: 'c' })).toMatchObject({
      constructor: ConflictError,
      code: 5,
      status: 409,
      message: 'c',
    });
    expect(PaymentsError.from(502, 'gateway')).toMatchObject({ code: 0, status: 502, message: 'HTTP 502', retryable: true });
  });
  it('exposes the enriched envelope: field, remediation, request_id, retryable and every invalid field', () => {
    const e = PaymentsError.from(400, {
      code: 3,
      message: 'body.amount must be > 0',
      field: 'amount',
      remediation: 'Send amount > 0.',
      request_id: 'req_1',
      retryable: false,
      errors: [
        { field: 'amount', message: 'body.amount must be > 0' },
        { field: 'expires_in', message: 'expires_in must be a duration' },
        { message: 'no field' },
        'garbage',
      ],
    });
    expect(e).toMatchObject({
      code: 3,
      status: 400,
      field: 'amount',
      remediation: 'Send amount > 0.',
      request_id: 'req_1',
      retryable: false,
      errors: [
        { field: 'amount', message: 'body.amount must be > 0' },
        { field: 'expires_in', message: 'expires_in must be a duration' },
        { message: 'no field' },
      ],
    });
    // a non-retryable 503 (a rate pair with no source) stays non-retryable; a bare 503 is retryable
    expect(PaymentsError.from(503, { code: 1, message: 'no source', retryable: false }).retryable).toBe(false);
    expect(PaymentsError.from(503, undefined).retryable).toBe(true);
    expect(PaymentsError.from(404, { code: 2, message: 'x' }).retryable).toBe(false);
    // an answer without the envelope still has its request id from the header
    const proxy = PaymentsError.from(502, 'bad gateway', new Headers({ 'X-Request-Id': 'req_from_header' }));
    expect(proxy).toMatchObject({ request_id: 'req_from_header', field: undefined, errors: [] });
  });
});

describe('payments listen: forwarding', () => {
  const event = { id: 'evt_1', created_at: '2026-01-01T00:00:00Z', event_type: 'payment_session.completed' } as never;
  const refused = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
  const reset = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
  const run = (answers: Array<number | (() => Error)>, signal = new AbortController().signal) => {
    let calls = 0;
    const retries: number[] = [];
    const fetchImpl = (async () => {
      const a = answers[Math.min(calls++, answers.length - 1)]!;
      if (typeof a === 'function') throw a();
      return new Response(null, { status: a });
    }) as unknown as typeof fetch;
    return forwardRetryingRefused('http://127.0.0.1:1/hooks', event, 'whsec', {
      signal,
      onRetry: (ms) => retries.push(ms),
      delaysMs: [1, 2, 3],
      fetchImpl,
    }).then((result) => ({ result, calls, retries }));
  };

  it('tries a refused connection again (nothing reached the endpoint) until it answers', async () => {
    expect(await run([refused, refused, 204])).toEqual({ result: { status: 204 }, calls: 3, retries: [1, 2] });
  });

  it('gives up after the delays with the refusal', async () => {
    expect(await run([refused])).toEqual({ result: { status: null, error: 'ECONNREFUSED' }, calls: 4, retries: [1, 2, 3] });
  });

  it('never repeats what may have reached the endpoint: an answer, or a connection lost midway', async () => {
    expect(await run([500, 204])).toEqual({ result: { status: 500 }, calls: 1, retries: [] });
    expect(await run([reset, 204])).toEqual({ result: { status: null, error: 'ECONNRESET' }, calls: 1, retries: [] });
  });

  it('stops waiting when listen is stopped', async () => {
    const stop = new AbortController();
    stop.abort();
    expect(await run([refused, 204], stop.signal)).toEqual({ result: { status: null, error: 'ECONNREFUSED' }, calls: 1, retries: [] });
  });
});

describe('webhook signatures', () => {
  it('the SDK verifies what the service signs and the service verifies what the SDK signs (several secrets, any body)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.array(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }),
        (body, secrets, t) => {
          const now = new Date(t * 1000);
          const byService = serviceSign(body, secrets, t);
          expect(sdkSign(body, secrets, t)).toBe(byService);
          for (const s of secrets) expect(verifyWebhook(body, byService, [s], { now })).toBe(true);
          expect(serviceVerify(Buffer.from(body), sdkSign(body, secrets, t), secrets[secrets.length - 1], { now })).toBe(true);
          expect(isValidWebhook(`${body}x`, byService, secrets, { now })).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });
  it('refuses with a reason: tolerance (default 300 s), missing or malformed header, wrong secret', () => {
    const t = 1_700_000_000;
    const h = sdkSign('{"a":1}', 'sec', t);
    expect(verifyWebhook('{"a":1}', h, 'sec', { now: new Date((t + 300) * 1000) })).toBe(true);
    const reason = (f: () => unknown) => {
      try {
        f();
        return 'none';
      } catch (e) {
        return (e as WebhookVerificationError).reason;
      }
    };
    expect(reason(() => verifyWebhook('{"a":1}', h, 'sec', { now: new Date((t + 301) * 1000) }))).toBe('timestamp_outside_tolerance');
    expect(reason(() => verifyWebhook('{"a":1}', h, 'sec', 60))).toBe('timestamp_outside_tolerance');
    expect(reason(() => verifyWebhook('{"a":1}', undefined, 'sec'))).toBe('missing_header');
    expect(reason(() => verifyWebhook('{"a":1}', 'v1=abc', 'sec'))).toBe('malformed_header');
    expect(reason(() => verifyWebhook('{"a":1}', h, [], { now: new Date(t * 1000) }))).toBe('missing_secret');
    expect(reason(() => verifyWebhook('{"a":1}', h, ['other'], { now: new Date(t * 1000) }))).toBe('no_matching_signature');
  });
});

describe('proof of work', () => {
  it('both solvers find nonces the service accepts', async () => {
    for (const difficulty of [1, 8, 14]) {
      const challenge = `c${difficulty}-${Math.random()}`;
      const here = await solvePow(challenge, difficulty);
      const progress: number[] = [];
      const inWorker = await solvePowInWorker(challenge, difficulty, { onProgress: (p) => progress.push(p.tried) });
      expect(verifyPow(challenge, here, difficulty)).toBe(true);
      expect(verifyPow(challenge, inWorker, difficulty)).toBe(true);
      expect(powBits(challenge, inWorker)).toBeGreaterThanOrEqual(difficulty);
      expect(progress.length).toBeGreaterThan(0);
    }
  });
  it('the worker can be aborted', async () => {
    const controller = new AbortController();
    const p = solvePowInWorker('never', 60, { signal: controller.signal });
    controller.abort();
    await expect(p).rejects.toThrow(/aborted/);
  });
});

describe('parseSse', () => {
  it('parses messages split across chunks, with comments, CRLF, multi-line data and persistent ids', async () => {
    const text =
      'retry: 2000\n: hello\n\nid: 1\nevent: a\ndata: {"x":\ndata: 1}\n\r\n: keep-alive\n\nevent: b\ndata: two\r\n\r\nid: 3\ndata: three\n\n';
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.slice(i, i + 7));
        c.close();
      },
    });
    const got = [];
    for await (const m of parseSse(body)) got.push(m);
    expect(got).toEqual([
      { id: '1', event: 'a', data: '{"x":\n1}' },
      { id: '1', event: 'b', data: 'two' },
      { id: '3', event: 'message', data: 'three' },
    ]);
  });
});

it("the SDK's generated types match openapi.json (npm run generate -w @stablecoin-payments/sdk)", () => {
  expect(() =>
    execFileSync(process.execPath, ['sdk/scripts/generate-types.ts', '--check'], { encoding: 'utf8', stdio: 'pipe' }),
  ).not.toThrow();
});
