/**
 * Piscina task: derives deposit addresses off the event loop, one or a block of consecutive indexes. An
 * Ethereum address costs one secp256k1 public key (~50 µs through libsecp256k1) and two keccak hashes, a
 * Solana one an ed25519 key (~0.2 ms); a worker round trip costs ~0.06–0.4 ms, so blocks amortise it.
 * The mnemonic arrives once, as workerData.
 */
import { workerData } from 'node:worker_threads';
import { AddressDeriver, type AddressChain } from '../lib/addresses/addresses.ts';

const deriver = new AddressDeriver((workerData as { phrase: string }).phrase);

export default function deriveAddress(task: { chain: AddressChain; index: number; count?: number }): string | string[] {
  if (task.count === undefined) return deriver.address(task.chain, task.index);
  return Array.from({ length: task.count }, (_, i) => deriver.address(task.chain, task.index + i));
}
