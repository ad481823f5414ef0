/**
 * The proof-of-work solver on a Node worker thread, so registration never blocks the caller's event loop
 * (20 bits is about a million SHA-256 hashes). The worker's source is inline (an eval worker with
 * node:crypto), so it needs no file path and works however the package is loaded or bundled.
 */
import { Worker } from 'node:worker_threads';
import type { PowSolver } from './pow.ts';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// crypto.hash: one-shot, about twice as fast as createHash for inputs this small
const { hash } = require('node:crypto');
const { challenge, difficulty, every } = workerData;
function bits(d) {
  let n = 0;
  for (const b of d) { if (b === 0) { n += 8; continue; } return n + Math.clz32(b) - 24; }
  return n;
}
for (let i = 0; ; i++) {
  const nonce = i.toString(36);
  if (bits(hash('sha256', challenge + ':' + nonce, 'buffer')) >= difficulty) {
    parentPort.postMessage({ nonce, tried: i + 1 });
    break;
  }
  if (i % every === every - 1) parentPort.postMessage({ tried: i + 1 });
}
`;

export const solvePowInWorker: PowSolver = (challenge, difficulty, opts = {}) =>
  new Promise((resolve, reject) => {
    const expected = 2 ** difficulty;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { challenge, difficulty, every: 50_000 } });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      fn();
      void worker.terminate();
    };
    const onAbort = () => finish(() => reject(new Error('proof of work aborted')));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { nonce?: string; tried: number }) => {
      opts.onProgress?.({ tried: m.tried, expected });
      if (m.nonce !== undefined) finish(() => resolve(m.nonce!));
    });
    worker.on('error', (e) => finish(() => reject(e)));
    worker.on('exit', (code) => finish(() => reject(new Error(`proof-of-work worker exited with code ${code}`))));
  });
