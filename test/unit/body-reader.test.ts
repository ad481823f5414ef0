/**
 * The gateway's JSON body reader (lib/http/body-reader.ts) answers every body as body-parser's json
 * middleware with the same options does: for random JSON (random numbers near the limits of a double,
 * deep nesting, broken text, stray bytes, a byte order mark, random chunking) the fast path gives the same
 * value, or an error with the same status, type and client-facing message. Numbers the one-pass scan lets
 * through without the reviver are exact; the fast path is taken (no reviver) for the common body and left
 * for compressed, chunked or non-UTF-8 bodies; a client that leaves mid-body gets next() once.
 */
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { bodyErrorMessage, isExactNumber, scanJsonBody } from '../../lib/core/json-body.ts';
import { bodyParserJson, jsonBodyReader, limitBytes } from '../../lib/http/body-reader.ts';
import { memoryRequest, outcome, type Middleware, type Outcome } from '../helpers/memory-request.ts';

const LIMIT = '4kb';
const fast = jsonBodyReader(LIMIT) as Middleware;
const slow = bodyParserJson(LIMIT) as Middleware;
const STRICT = 'a JSON body must be an object or an array';

/** What a client can tell of an outcome: the value, or the error's status, type and reason (sendEnvelope's inputs). */
function seen(o: Outcome) {
  if ('body' in o) return o;
  const e = o.error;
  return { status: e.status, type: e.type, code: e.code, reason: bodyErrorMessage(e) };
}

async function both(body: Buffer, headers: Record<string, string> = {}, chunk = 0) {
  const h = { 'content-type': 'application/json', 'content-length': String(body.length), ...headers };
  const a = await outcome(fast, memoryRequest(h, body, { chunk }));
  const b = await outcome(slow, memoryRequest(h, body, { chunk }));
  return { a, b };
}

async function same(body: Buffer, headers: Record<string, string> = {}, chunk = 0): Promise<void> {
  const { a, b } = await both(body, headers, chunk);
  expect(seen(a)).toStrictEqual(seen(b));
  // JSON.parse's own messages too (a strict refusal is worded by each reader; clients see neither)
  if ('error' in a && 'error' in b && !a.error.message.startsWith(STRICT)) expect(a.error.message).toBe(b.error.message);
}

// number texts around the edges of a double: long mantissas, leading and trailing zeros, exponents
const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const numberText = fc
  .record({
    sign: fc.constantFrom('', '-'),
    int: fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, 24)).map(([a, b]) => a + b),
    ),
    zeros: fc.oneof(fc.nat(3), fc.integer({ min: 280, max: 330 })),
    frac: fc.option(digits(1, 20), { nil: undefined }),
    exp: fc.option(fc.tuple(fc.constantFrom('e', 'E', 'e+', 'e-', 'E-'), digits(1, 4)), { nil: undefined }),
  })
  .map(({ sign, int, zeros, frac, exp }) => {
    const fraction = frac === undefined ? '' : `.${int === '0' ? '0'.repeat(zeros) : ''}${frac}`;
    return `${sign}${int}${fraction}${exp ? exp.join('') : ''}`;
  });

// a JSON text: fast-check's JSON values with some of those numbers, in an object or an array (or not)
const leaf = fc.oneof(
  numberText,
  fc.json(),
  fc.string({ unit: 'binary', maxLength: 8 }).map((s) => JSON.stringify(s)),
);
const ws = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');
const jsonText = fc
  .tuple(fc.array(fc.tuple(fc.string({ maxLength: 6 }), leaf), { maxLength: 8 }), fc.constantFrom('object', 'array', 'bare'), ws, ws)
  .map(([entries, shape, pre, post]) => {
    const inner =
      shape === 'object'
        ? `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`
        : shape === 'array'
          ? `[${entries.map(([, v]) => v).join(`,${pre}`)}]`
          : (entries[0]?.[1] ?? '');
    return pre + inner + post;
  });

// broken the ways a client breaks a body: cut short, a stray byte, a byte order mark, nesting
const damaged = fc
  .tuple(
    jsonText,
    fc.record({
      cut: fc.option(fc.nat(), { nil: undefined }),
      stray: fc.option(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { nil: undefined }),
      bom: fc.boolean(),
      nest: fc.option(fc.integer({ min: 28, max: 36 }), { nil: undefined }),
    }),
  )
  .map(([text, d]) => {
    if (d.nest !== undefined) text = `${'['.repeat(d.nest)}${text}${']'.repeat(d.nest)}`;
    let buf = Buffer.from(text);
    if (d.cut !== undefined && buf.length) buf = buf.subarray(0, d.cut % buf.length);
    if (d.stray) {
      const at = d.stray[0] % (buf.length + 1);
      buf = Buffer.concat([buf.subarray(0, at), Buffer.from([d.stray[1]]), buf.subarray(at)]);
    }
    return d.bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]) : buf;
  });

const utf8Types = fc
  .constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset=UTF-8',
    'application/json ; charset = utf-8',
  )
  .map((type): Record<string, string> => ({ 'content-type': type }));

/** The depth check as it was before the one-pass scan: the oracle of the scan's refusals. */
function formerDepthCheck(buf: Buffer, max = 32): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return false;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return true;
}

describe('JSON body reader', () => {
  it('refuses exactly the bodies the former depth check refused', () => {
    const passes = (buf: Buffer) => {
      try {
        scanJsonBody(buf);
        return true;
      } catch {
        return false;
      }
    };
    const bracketsAndEscapes = fc
      .array(fc.constantFrom('[', '[', '[', '{', '{', ']', '}', '"', '\\', '1', '.', 'e', ','), { maxLength: 200 })
      .map((xs) => Buffer.from(xs.join('')));
    fc.assert(
      fc.property(fc.oneof(damaged, bracketsAndEscapes), (buf) => expect(passes(buf)).toBe(formerDepthCheck(buf))),
      { numRuns: 5000 },
    );
  });

  it('lets through without the reviver only numbers that are exact', () => {
    fc.assert(
      fc.property(numberText, (n) => {
        if (!scanJsonBody(Buffer.from(`[${n}]`))) expect(isExactNumber(n, Number(n))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
    // the edges: 15 significant digits pass, a 16th or an exponent goes to the reviver
    expect(scanJsonBody(Buffer.from('[123456789012345, 0.000123456789012345, -100000000000000, 1.5]'))).toBe(false);
    for (const n of ['1234567890123456', '0.1234567890123456', '1e5', '2E-3', `0.${'0'.repeat(301)}1`])
      expect(scanJsonBody(Buffer.from(`{"n":${n}}`))).toBe(true);
    // digits inside strings are not numbers
    expect(scanJsonBody(Buffer.from('{"n":"12345678901234567890e9","m":"\\"1e5"}'))).toBe(false);
  });

  it('answers random JSON as body-parser does', async () => {
    await fc.assert(
      fc.asyncProperty(jsonText, utf8Types, fc.nat(40), async (text, headers, chunk) => same(Buffer.from(text), headers, chunk)),
      { numRuns: 1500 },
    );
  });

  it('answers damaged, nested and odd-byte bodies as body-parser does', async () => {
    await fc.assert(
      fc.asyncProperty(damaged, fc.nat(16), async (buf, chunk) => same(buf, {}, chunk)),
      { numRuns: 1500 },
    );
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 40 }), async (bytes) =>
        same(Buffer.concat([Buffer.from('{"s":"'), bytes, Buffer.from('"}')])),
      ),
      { numRuns: 500 },
    );
  });

  it('answers the edge cases as body-parser does', async () => {
    const cases = [
      '',
      ' ',
      '\ufeff',
      '\ufeff{}',
      '"x"',
      '  7',
      'null',
      '{"a":1}x',
      '{"__proto__":{"x":1}}',
      '[-0]',
      '{"a":9007199254740993}',
    ];
    for (const text of cases) await same(Buffer.from(text));
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    await same(Buffer.from(deep(32)));
    await same(Buffer.from(deep(33)));
    // at the limit, one byte over (413 from body-parser), and a length that disagrees with the body
    const at = Buffer.from(`{"s":"${'a'.repeat(limitBytes(LIMIT) - 8)}"}`);
    expect(at.length).toBe(4096);
    await same(at);
    const over = Buffer.from(`{"s":"${'a'.repeat(limitBytes(LIMIT) - 7)}"}`);
    const { a } = await both(over);
    expect(seen(a)).toMatchObject({ status: 413, type: 'entity.too.large' });
    await same(over);
  });

  it('reads the limit as body-parser (the bytes package) does', () => {
    expect([limitBytes('500'), limitBytes('500b'), limitBytes('64kb'), limitBytes('2KB'), limitBytes('1mb')]).toEqual([
      500, 500, 65_536, 2048, 1_048_576,
    ]);
    expect(limitBytes('1.5kb')).toBe(-1); // not a BODY_LIMIT form: the fast path is never taken
  });

  it('parses the common body without a reviver and leaves other bodies to body-parser', async () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const body = Buffer.from('{"amount":12.5,"amount_subunits":"12500000","target":"https://x.example/a"}');
      const calls = async (b: Buffer, headers: Record<string, string>) => {
        parse.mockClear();
        const o = await outcome(
          fast,
          memoryRequest({ 'content-type': 'application/json', 'content-length': String(b.length), ...headers }, b),
        );
        return { o, revivers: parse.mock.calls.map((c) => c.length > 1 && c[1] !== undefined) };
      };
      expect(await calls(body, {})).toEqual({ o: { body: JSON.parse(body.toString()) }, revivers: [false] });
      expect(await calls(body, { 'content-type': 'application/json; charset=utf-8' })).toMatchObject({ revivers: [false] });
      // a number that may be inexact: the reviver checks it
      expect((await calls(Buffer.from('{"a":0.1234567890123456}'), {})).revivers).toEqual([true]);
      // compressed, chunked, another charset: body-parser's, as before
      const gz = gzipSync(body);
      expect(await calls(gz, { 'content-encoding': 'gzip', 'content-length': String(gz.length) })).toEqual({
        o: { body: JSON.parse(body.toString()) },
        revivers: [true],
      });
      expect((await calls(body, { 'transfer-encoding': 'chunked' })).revivers).toEqual([true]);
      const latin1 = await calls(body, { 'content-type': 'application/json; charset=latin1' });
      expect(seen(latin1.o)).toMatchObject({ status: 415, type: 'charset.unsupported' });
    } finally {
      parse.mockRestore();
    }
  });

  it('passes a request the client left mid-body on once, as body-parser does', async () => {
    for (const mw of [fast, slow]) {
      const r = memoryRequest({ 'content-type': 'application/json', 'content-length': '100' }, Buffer.from('{"a":'), { end: false });
      const done = outcome(mw, r);
      await new Promise((resolve) => setImmediate(resolve));
      // what Node's server does when the socket closes under a request
      r.req.socket.destroy();
      r.req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      expect(seen(await done)).toMatchObject({ status: 400, type: 'request.aborted', code: 'ECONNABORTED' });
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('sets no body when there is none', async () => {
    for (const mw of [fast, slow]) {
      const r = memoryRequest({}, Buffer.alloc(0));
      expect(await outcome(mw, r)).toEqual({ body: undefined });
      expect('body' in r.req).toBe(true);
    }
  });
});
