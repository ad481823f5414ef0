/**
 * Piscina task: signs a chain transaction off the event loop (a secp256k1 signature costs ~1 ms in JS,
 * key derivation more). Private keys exist only in this worker: the mnemonic arrives once as workerData,
 * tasks name their keys by KeyRef (lib/chains/keys.ts) and get back signed bytes only.
 */
import { workerData } from 'node:worker_threads';
import { signTransaction, type SignTask, type SignResult } from '../lib/chains/sign.ts';
import { KeyDeriver } from '../lib/chains/keys.ts';

const keys = new KeyDeriver((workerData as { phrase: string }).phrase);

export default function sign(task: SignTask): SignResult {
  return signTransaction(keys, task);
}
