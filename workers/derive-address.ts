/**
 * Piscina task: derives a deposit address off the event loop. An Ethereum address costs one secp256k1
 * point multiplication (~0.7 ms in JS), a Solana one an ed25519 key (~0.2 ms); a worker round trip costs
 * ~0.06 ms (measured in README: Payment sessions). The mnemonic arrives once, as workerData.
 */
import { workerData } from 'node:worker_threads';
import { AddressDeriver, type AddressChain } from '../lib/addresses.ts';

const deriver = new AddressDeriver((workerData as { phrase: string }).phrase);

export default function deriveAddress(task: { chain: AddressChain; index: number }): string {
  return deriver.address(task.chain, task.index);
}
