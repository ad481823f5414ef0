import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import Stripe from 'stripe';
import { computeSignature, parseSignatureHeader, signatureHeader } from '../../lib/webhooks/signature.ts';
import { isValidWebhook, verifyWebhook, WebhookVerificationError } from '../../lib/webhooks/verify.ts';

const SECRET = 'whsec_0123456789abcdefghijklmnopqrstuv';
const OLD = 'whsec_previous_secret_value_abcdef';
const BODY = JSON.stringify({
  event_type: 'payment_session.completed',
  session_id: 'ps_1',
  status: 'completed',
  amount: 12.5,
  currency: 'USDC',
  chain: 'ethereum',
  network: 'testnet',
  timestamp: '1700000000',
});
const T = 1_700_000_000;
const at = (unix: number) => new Date(unix * 1000);
const stripe = new Stripe('sk_test_only_used_offline');

function reason(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
  throw new Error('expected a WebhookVerificationError');
}

describe('webhook signature (scheme v1)', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> keyed by the secret', () => {
    const header = signatureHeader(BODY, [SECRET], T);
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    expect(header).toBe(`t=${T},v1=${expected}`);
    expect(computeSignature(T, Buffer.from(BODY), SECRET)).toBe(expected);
  });

  it('signs with every live secret during a rotation overlap, newest first', () => {
    const header = signatureHeader(BODY, [SECRET, OLD], T);
    const parsed = parseSignatureHeader(header)!;
    expect(parsed.timestamp).toBe(T);
    expect(parsed.signatures).toEqual([computeSignature(T, BODY, SECRET), computeSignature(T, BODY, OLD)]);
  });

  it('refuses to sign without a secret or with a bad timestamp', () => {
    expect(() => signatureHeader(BODY, [], T)).toThrow(/secret/);
    expect(() => signatureHeader(BODY, [SECRET], 1.5)).toThrow(/unix seconds/);
  });

  it('parses leniently: unknown schemes and spaces are ignored, a missing t or v1 is null', () => {
    const sig = computeSignature(T, BODY, SECRET);
    expect(parseSignatureHeader(`t=${T}, v0=abc, v1=${sig.toUpperCase()}, v2=zzz`)).toEqual({ timestamp: T, signatures: [sig] });
    expect(parseSignatureHeader(`v1=${sig}`)).toBeNull();
    expect(parseSignatureHeader(`t=${T}`)).toBeNull();
    expect(parseSignatureHeader(`t=abc,v1=${sig}`)).toBeNull();
    expect(parseSignatureHeader('')).toBeNull();
  });
});

describe('verifyWebhook', () => {
  const header = signatureHeader(BODY, [SECRET], T);

  it('accepts an authentic request within the tolerance (string or bytes)', () => {
    expect(verifyWebhook(BODY, header, SECRET, { now: at(T + 299) })).toBe(true);
    expect(verifyWebhook(Buffer.from(BODY), header, SECRET, { now: at(T - 299) })).toBe(true);
    expect(verifyWebhook(new TextEncoder().encode(BODY), header, SECRET, { now: at(T) })).toBe(true);
  });

  it('rejects a tampered body, a wrong secret, a missing or malformed header', () => {
    expect(reason(() => verifyWebhook(BODY.replace('12.5', '125'), header, SECRET, { now: at(T) }))).toBe('no_matching_signature');
    expect(reason(() => verifyWebhook(BODY, header, OLD, { now: at(T) }))).toBe('no_matching_signature');
    expect(reason(() => verifyWebhook(BODY, undefined, SECRET, { now: at(T) }))).toBe('missing_header');
    expect(reason(() => verifyWebhook(BODY, 'sha256=abc', SECRET, { now: at(T) }))).toBe('malformed_header');
    expect(reason(() => verifyWebhook(BODY, header, '', { now: at(T) }))).toBe('missing_secret');
  });

  it('rejects a timestamp more than 300 s away in either direction; tolerance is configurable, 0 turns it off', () => {
    expect(reason(() => verifyWebhook(BODY, header, SECRET, { now: at(T + 301) }))).toBe('timestamp_outside_tolerance');
    expect(reason(() => verifyWebhook(BODY, header, SECRET, { now: at(T - 301) }))).toBe('timestamp_outside_tolerance');
    expect(verifyWebhook(BODY, header, SECRET, { now: at(T + 3000), toleranceSeconds: 3600 })).toBe(true);
    expect(verifyWebhook(BODY, header, SECRET, { now: at(T + 10 ** 6), toleranceSeconds: 0 })).toBe(true);
  });

  it('accepts any matching v1 (rotation overlap) and a list of secrets', () => {
    const both = signatureHeader(BODY, [SECRET, OLD], T);
    expect(verifyWebhook(BODY, both, SECRET, { now: at(T) })).toBe(true);
    expect(verifyWebhook(BODY, both, OLD, { now: at(T) })).toBe(true);
    expect(verifyWebhook(BODY, header, [OLD, SECRET], { now: at(T) })).toBe(true);
    expect(reason(() => verifyWebhook(BODY, both, 'whsec_other', { now: at(T) }))).toBe('no_matching_signature');
  });

  it('refuses a parsed body with a clear TypeError; isValidWebhook is the boolean form', () => {
    expect(() => verifyWebhook(JSON.parse(BODY), header, SECRET)).toThrow(TypeError);
    expect(isValidWebhook(BODY, header, SECRET, { now: at(T) })).toBe(true);
    expect(isValidWebhook(`${BODY} `, header, SECRET, { now: at(T) })).toBe(false);
  });

  it('property: a signed body verifies, and any changed byte or secret does not', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.nat(),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (body, secret, pos, t) => {
          const h = signatureHeader(body, [secret], t);
          expect(verifyWebhook(body, h, secret, { now: at(t) })).toBe(true);
          const bytes = Buffer.from(body, 'utf8');
          if (bytes.length > 0) {
            const changed = Buffer.from(bytes);
            changed[pos % changed.length] ^= 1;
            expect(isValidWebhook(changed, h, secret, { now: at(t) })).toBe(false);
          }
          expect(isValidWebhook(body, h, `${secret}x`, { now: at(t) })).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('third-party verifier: the stripe package accepts our header', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('stripe.webhooks.constructEvent verifies our signature and parses the body', () => {
    const t = now();
    const header = signatureHeader(BODY, [SECRET], t);
    const event = stripe.webhooks.constructEvent(BODY, header, SECRET) as unknown as Record<string, unknown>;
    expect(event).toEqual(JSON.parse(BODY));
  });

  it('stripe rejects a tampered body, a wrong secret and an old timestamp', () => {
    const t = now();
    const header = signatureHeader(BODY, [SECRET], t);
    expect(() => stripe.webhooks.constructEvent(BODY.replace('ps_1', 'ps_2'), header, SECRET)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() => stripe.webhooks.constructEvent(BODY, header, OLD)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    const stale = signatureHeader(BODY, [SECRET], t - 301);
    expect(() => stripe.webhooks.constructEvent(BODY, stale, SECRET)).toThrow(/tolerance/i);
  });

  it('stripe accepts either secret of a rotation-overlap header', () => {
    const header = signatureHeader(BODY, [SECRET, OLD], now());
    expect(stripe.webhooks.constructEvent(BODY, header, SECRET)).toBeTruthy();
    expect(stripe.webhooks.constructEvent(BODY, header, OLD)).toBeTruthy();
  });

  it('our helper accepts a header made by stripe.webhooks.generateTestHeaderString', () => {
    const t = now();
    const header = stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET, timestamp: t });
    expect(header).toBe(signatureHeader(BODY, [SECRET], t));
    expect(verifyWebhook(BODY, header, SECRET)).toBe(true);
  });
});
