/**
 * Registration proof of work (sha256-leading-zero-bits-v1): a nonce is valid when
 * SHA-256(challenge + ":" + nonce) starts with at least `difficulty` zero bits. This solver runs on the
 * calling thread in slices, yielding between them so a page or the event loop stays responsive; in Node
 * the package's default (node.ts) runs it on a worker thread instead.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';

export interface PowProgress {
  /** nonces tried so far */
  tried: number;
  /** nonces a solution takes on average (2^difficulty) */
  expected: number;
}

export interface SolveOptions {
  onProgress?: (p: PowProgress) => void;
  signal?: AbortSignal;
}

export type PowSolver = (challenge: string, difficulty: number, opts?: SolveOptions) => Promise<string>;

export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

export function powBits(challenge: string, nonce: string): number {
  return leadingZeroBits(sha256(utf8ToBytes(`${challenge}:${nonce}`)));
}

const SLICE = 20_000;

/** Finds a nonce on this thread (browsers, or where worker threads are not wanted). */
export const solvePow: PowSolver = async (challenge, difficulty, opts = {}) => {
  const expected = 2 ** difficulty;
  for (let i = 0; ; i++) {
    const nonce = i.toString(36);
    if (powBits(challenge, nonce) >= difficulty) return nonce;
    if (i % SLICE === SLICE - 1) {
      opts.onProgress?.({ tried: i + 1, expected });
      if (opts.signal?.aborted) throw new Error('proof of work aborted');
      await new Promise((r) => setTimeout(r, 0));
    }
  }
};
