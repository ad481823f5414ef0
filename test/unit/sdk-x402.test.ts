/** The SDK's x402 header encoding (browser-safe: btoa/atob, TextEncoder) against Node's Buffer base64 JSON. */
import fc from 'fast-check';
import { encodeHeader, decodeHeader, decodeChallenge, CHALLENGE_FIELDS } from '../../sdk/src/x402.ts';

const bufferEncode = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64');
const json = fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 });

it('encodeHeader is exactly base64 of the UTF-8 JSON, and decodeHeader reads it back (also as base64url)', () => {
  fc.assert(
    fc.property(json, (v) => {
      const h = encodeHeader(v);
      expect(h).toBe(bufferEncode(v));
      const back = JSON.parse(JSON.stringify(v));
      expect(decodeHeader(h)).toEqual(back);
      expect(decodeHeader(Buffer.from(JSON.stringify(v), 'utf8').toString('base64url'))).toEqual(back);
    }),
    { numRuns: 300 },
  );
});

it('a large value survives the round trip', () => {
  const v = { memo: 'x402_1', payload: { transaction: 'é'.repeat(20_000) } };
  expect(decodeHeader(encodeHeader(v))).toEqual(v);
});

it('anything that is not base64 JSON of an object is null', () => {
  for (const bad of [
    undefined,
    null,
    '',
    '   ',
    'not base64!',
    '%%%',
    bufferEncode([1, 2]),
    bufferEncode('str'),
    bufferEncode(null),
    'abcde',
    'a'.repeat(70_000),
    Buffer.from('{"a":').toString('base64'),
  ]) {
    expect(decodeHeader(bad)).toBeNull();
  }
});

it("decodeChallenge keeps only the spec's string fields and needs a memo", () => {
  const raw = { ...Object.fromEntries(CHALLENGE_FIELDS.map((f) => [f, `v-${f}`])), extra: 'dropped', amount: 5 };
  const c = decodeChallenge(encodeHeader(raw))!;
  expect(Object.keys(c).sort()).toEqual(CHALLENGE_FIELDS.filter((f) => f !== 'amount').sort());
  expect(decodeChallenge(encodeHeader({ amount: '1' }))).toBeNull();
});
