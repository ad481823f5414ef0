/**
 * Benchmark: registration proof-of-work cost (verification on the server, solving on the client) and
 * authenticated GET /v1/me throughput on the embedded default (`npm start` as a child process).
 * Usage: npm run bench:onboarding [-- --requests 5000 --concurrency 50]
 */
import { randomBytes } from 'node:crypto';
import { solvePow, verifyPow } from '../lib/onboarding/pow.ts';
import { arg, benchMerchant, load, startServiceProcess } from './bench-lib.ts';

const requests = arg('requests', 5000);
const concurrency = arg('concurrency', 50);

// 1. verification: one SHA-256 of challenge:nonce plus a bit count
const challenge = randomBytes(24).toString('base64url');
const N = 200_000;
let t0 = performance.now();
for (let i = 0; i < N; i++) verifyPow(challenge, `nonce-${i}`, 20);
const verifyUs = ((performance.now() - t0) * 1000) / N;
console.log(`proof-of-work verification: ${verifyUs.toFixed(2)} µs per check (${N} checks)`);

// 2. solving (the client's cost) at the default difficulty and below
for (const difficulty of [16, 18, 20]) {
  const runs = difficulty === 20 ? 3 : 5;
  t0 = performance.now();
  for (let r = 0; r < runs; r++) solvePow(randomBytes(24).toString('base64url'), difficulty);
  console.log(
    `proof-of-work solving at ${difficulty} bits: ${((performance.now() - t0) / runs).toFixed(0)} ms on average (${runs} challenges, one core)`,
  );
}

// 3. GET /v1/me throughput
const svc = await startServiceProcess({ POW_DIFFICULTY: '8', TRUSTED_EMAIL_DOMAINS: 'bench.example' });
try {
  const reg = await benchMerchant(svc, 'bench@bench.example');
  const headers = { 'X-API-Key': reg.api_key };
  await load(500, 10, async () => (await fetch(`${svc.url}/v1/me`, { headers })).status); // warm-up
  const r = await load(requests, concurrency, async () => {
    const res = await fetch(`${svc.url}/v1/me`, { headers });
    await res.arrayBuffer();
    return res.status;
  });
  console.log(
    `GET /v1/me: ${r.perSecond.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.errors} errors (${r.requests} requests, ${concurrency} concurrent clients)`,
  );
} finally {
  await svc.stop();
}
