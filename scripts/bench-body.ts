/**
 * Micro-benchmark of reading a JSON request body: body-parser's json middleware with the gateway's options
 * (what every body went through before lib/http/body-reader.ts) against the body reader's fast path, on
 * in-memory requests (test/helpers/memory-request.ts), the two alternating in rounds. The harness alone
 * (building the request and draining its body) is measured too: subtract it for the readers' own cost.
 *
 * Usage: node scripts/bench-body.ts [-- --n 20000 --rounds 5]
 */
import { bodyParserJson, jsonBodyReader } from '../lib/http/body-reader.ts';
import { memoryRequest, outcome, type Middleware } from '../test/helpers/memory-request.ts';
import { spendAttempt } from './bench-lib.ts';

const argv = process.argv.slice(2);
const arg = (name: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const N = arg('n', 20_000);
const ROUNDS = arg('rounds', 5);

function bigBody() {
  return {
    amount: 12.5,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
    metadata: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`line_${i}`, { sku: `SKU-${i}-XL`, qty: i, price_cents: 999 + i }])),
  };
}

const BODIES: Record<string, string> = {
  'spend attempt': JSON.stringify(
    spendAttempt('0x52908400098527886E0F7030069857D2E4169EE7', { reference: 'x402_01JZ8Q4W0F7R8M3K2N5P6T9V0X' }, '10000'),
  ),
  'session create': JSON.stringify({
    amount: 12.5,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
    metadata: { order: 'bench' },
  }),
  '4 KB of metadata': JSON.stringify(bigBody()),
  // a number of 17 significant digits (exact: a double's shortest form): the reviver checks the body
  '4 KB, one 17-digit number': JSON.stringify({ ...bigBody(), tax_rate: 0.30000000000000004 }),
};

// the harness alone: the same request, its body drained by a bare reader
const drain: Middleware = (req, _res, next) => {
  req.on('data', () => {});
  req.on('end', () => next());
};

async function run(mw: Middleware, body: Buffer): Promise<number> {
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await outcome(mw, memoryRequest(headers, body));
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / N;
}

const limit = '64kb';
const readers: Record<string, Middleware> = {
  harness: drain,
  'body-parser (before)': bodyParserJson(limit) as Middleware,
  'fast path (after)': jsonBodyReader(limit) as Middleware,
};

console.log(`node ${process.version}, ${N} requests per round, ${ROUNDS} rounds; CPU µs per request (best / median of rounds)`);
for (const [name, text] of Object.entries(BODIES)) {
  const body = Buffer.from(text);
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((k) => [k, []]));
  for (const mw of Object.values(readers)) await run(mw, body); // warm up
  for (let r = 0; r < ROUNDS; r++) for (const [k, mw] of Object.entries(readers)) times[k].push(await run(mw, body));
  console.log(`\n${name} (${body.length} bytes)`);
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = mid(times.harness);
  for (const [k, xs] of Object.entries(times)) {
    const own = k === 'harness' ? '' : `, own ${(mid(xs) - base).toFixed(2)}`;
    console.log(`  ${k.padEnd(22)} ${Math.min(...xs).toFixed(2)} / ${mid(xs).toFixed(2)}${own}`);
  }
}
