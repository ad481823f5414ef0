/**
 * Transaction signing, shared by the piscina worker (workers/sign-transaction.ts) and tests. The caller
 * builds the unsigned transaction; this only adds signatures and returns the bytes to broadcast.
 * - Ethereum: an EIP-155 legacy transaction (type 0: the fee is exactly gasUsed × gasPrice, which lets a
 *   native sweep send "balance − fee" and leave nothing behind).
 * - Solana: a compiled message (legacy) signed by each required signer, in the message's signer order.
 */
import { createPrivateKey, sign as edSign } from 'node:crypto';
import { Transaction, encodeBase58 } from 'ethers';
import { signDigest } from './ethereum/ecdsa.ts';
import type { KeyDeriver, KeyRef } from './keys.ts';

export interface EthUnsignedTx {
  chainId: number;
  nonce: number;
  to: string;
  /** wei, digit string */
  value: string;
  data: string;
  gasLimit: string;
  gasPrice: string;
}

export type SignTask =
  | { chain: 'ethereum'; key: KeyRef; tx: EthUnsignedTx }
  /** message: base64 of the serialized message; keys: one per required signature, in order */
  | { chain: 'solana'; keys: KeyRef[]; message: string };

export interface SignResult {
  /** Ethereum: 0x hex of the signed transaction; Solana: base64 of the wire transaction */
  raw: string;
  /** Ethereum: the transaction hash; Solana: the first signature (base58), the transaction id */
  hash: string;
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function signTransaction(keys: KeyDeriver, task: SignTask): SignResult {
  if (task.chain === 'ethereum') {
    const t = task.tx;
    const tx = Transaction.from({
      type: 0,
      chainId: t.chainId,
      nonce: t.nonce,
      to: t.to,
      value: BigInt(t.value),
      data: t.data,
      gasLimit: BigInt(t.gasLimit),
      gasPrice: BigInt(t.gasPrice),
    });
    tx.signature = signDigest(keys.privateKey(task.key), tx.unsignedHash);
    return { raw: tx.serialized, hash: tx.hash! };
  }
  const message = Buffer.from(task.message, 'base64');
  const sigs = task.keys.map((ref) => {
    const key = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(keys.privateKey(ref))]),
      format: 'der',
      type: 'pkcs8',
    });
    return edSign(null, message, key);
  });
  if (sigs.length === 0 || sigs.length > 127) throw new Error('a Solana transaction needs 1 to 127 signatures');
  const wire = Buffer.concat([Buffer.from([sigs.length]), ...sigs, message]);
  return { raw: wire.toString('base64'), hash: encodeBase58(sigs[0]!) };
}
