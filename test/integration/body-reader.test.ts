/**
 * Request bodies over HTTP through a started node (lib/http/body-reader.ts): the fast path and body-parser
 * answer each body as before — the body as sent (a byte order mark and charset=utf-8 included), malformed,
 * non-object, too deep and inexact bodies refused with their 400, a gzip or chunked body still read, the
 * limit exact to the byte (413 above it), another charset 415, and a client that leaves mid-body harms
 * nothing.
 */
import { gzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, ETH_USDC, postRawSession } from './sessions-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { REMEDIATION } from '../../lib/core/errors.ts';

describe('request bodies', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  beforeAll(async () => {
    t = await startTestNode({ BODY_LIMIT: '2kb', RATE_LIMIT_PER_MINUTE: '1000' });
    m = await merchant(t);
  });
  afterAll(async () => {
    await t.stop();
  });

  const post = (body: string | Buffer, headers: Record<string, string> = {}) => postRawSession(t, m.apiKey, body, headers);
  const session = (metadata: object) => JSON.stringify({ amount: 1.25, expires_in: '1h', paymentMethod: ETH_USDC, metadata });

  it('reads the body as sent, with or without a charset and a byte order mark', async () => {
    const metadata = { note: 'café ✓ 💸 "quoted" [not nested]', n: 123456789012345, list: 'LIST' };
    // an exponent and a 17-digit number that a double carries exactly: checked, and taken
    const text = session(metadata).replace('"LIST"', '[0.5,-0,1e3,0.30000000000000004]');
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/JSON;charset=UTF-8']) {
      const res = await post(text, { 'Content-Type': type });
      expect(res.status).toBe(201);
      expect(res.body.metadata).toEqual({ ...metadata, list: [0.5, 0, 1000, 0.30000000000000004] });
    }
    const bom = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(session({ bom: true }))]));
    expect(bom.status).toBe(201);
    expect(bom.body.metadata).toEqual({ bom: true });
  });

  it('refuses malformed, non-object, too deep and inexact bodies with their reason', async () => {
    const notJson = { status: 400, body: { code: 3, message: 'request body is not valid JSON', remediation: REMEDIATION.json } };
    expect(await post('{"amount":')).toMatchObject(notJson);
    expect(await post('"a string"')).toMatchObject(notJson);
    expect(await post('  ')).toMatchObject(notJson);
    expect(await post('{"amount":1}}')).toMatchObject(notJson);
    const deep = `${'['.repeat(33)}${']'.repeat(33)}`;
    expect(await post(deep)).toMatchObject({
      status: 400,
      body: {
        code: 3,
        message: 'request body: objects and arrays nest deeper than 32 levels',
        remediation: 'Send objects and arrays nested at most 32 levels deep.',
      },
    });
    expect(await post(session({ big: 'BIG' }).replace('"BIG"', '12345678901234567890'))).toMatchObject({
      status: 400,
      body: {
        code: 3,
        message: expect.stringMatching(/^request body: big: the number 12345678901234567890 cannot be carried exactly/),
        remediation: 'Send a number a JSON double carries exactly, or the amount as a digit string (amount_subunits).',
      },
    });
    // an empty body is {} (body-parser's strict mode): the session's fields are missing
    const empty = await post('');
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/required/);
  });

  it('still reads gzip and chunked bodies, bounds the body to the byte, and refuses other charsets', async () => {
    const body = session({ via: 'gzip' });
    const gz = await post(gzipSync(body), { 'Content-Encoding': 'gzip' });
    expect(gz.status).toBe(201);
    expect(gz.body.metadata).toEqual({ via: 'gzip' });
    const chunked = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const u = new URL(`${t.url}/v1/payment_sessions`);
      const req = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': m.apiKey },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      const text = session({ via: 'chunks' });
      req.write(text.slice(0, 10));
      req.end(text.slice(10));
    });
    expect(chunked.status).toBe(201);
    expect(chunked.body.metadata).toEqual({ via: 'chunks' });

    // 2kb = 2048 bytes: read at the limit, 413 one byte above it
    const sized = (n: number) => {
      const text = session({ pad: '' });
      return text.replace('"pad":""', `"pad":"${'x'.repeat(n - Buffer.byteLength(text))}"`);
    };
    expect(Buffer.byteLength(sized(2048))).toBe(2048);
    expect((await post(sized(2048))).status).toBe(201);
    expect(await post(sized(2049))).toMatchObject({ status: 413, body: { code: 3, message: 'request body is too large' } });

    for (const charset of ['latin1', 'utf8'])
      expect((await post(body, { 'Content-Type': `application/json; charset=${charset}` })).status).toBe(415);
  });

  it('survives a client that leaves mid-body', async () => {
    await new Promise<void>((resolve) => {
      const u = new URL(`${t.url}/v1/payment_sessions`);
      const req = httpRequest({
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': '500', 'X-API-Key': m.apiKey },
      });
      req.on('error', () => resolve());
      req.write('{"amount":1,', () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    expect((await post(session({ after: 'abort' }))).status).toBe(201);
  });
});
