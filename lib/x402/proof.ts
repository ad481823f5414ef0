/**
 * x402 proofs (the X-Service-Payment value, base64 JSON): decoding and verification of the three forms,
 * each bound to exactly one challenge through its memo (the challenge id):
 *  - `exact` on Ethereum: an EIP-3009 transferWithAuthorization whose nonce is keccak256(memo);
 *  - `exact` on Solana: a transaction carrying the memo, signed by the payer, fee payer = our gas wallet,
 *    which appears in no instruction;
 *  - `agent_wallet`: a spend attempt of an agent wallet of this service (checked against the store by the
 *    caller; here only its shape).
 * Pure: the token's EIP-712 domain separator, the gas wallet address and the clock come from the caller.
 */
import { TypedDataEncoder, getAddress, hexlify, keccak256, recoverAddress, toUtf8Bytes, isHexString, Signature } from 'ethers';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { decodeHeader } from './challenge.ts';
import { associatedTokenAddress, TOKEN_PROGRAM_ID } from '../chains/clients.ts';

export type ProofReason =
  | 'malformed'
  | 'unknown_challenge'
  | 'wrong_network'
  | 'wrong_asset'
  | 'wrong_payee'
  | 'wrong_amount'
  | 'wrong_resource'
  | 'memo_mismatch'
  | 'not_yet_valid'
  | 'authorization_expired'
  | 'bad_signature'
  | 'challenge_expired'
  | 'already_redeemed'
  | 'fee_payer_mismatch'
  | 'fee_payer_in_instruction'
  | 'unexpected_instruction'
  | 'settlement_failed';

export class ProofError extends Error {
  readonly reason: ProofReason;
  constructor(reason: ProofReason, message: string) {
    super(message);
    this.name = 'ProofError';
    this.reason = reason;
  }
}

export interface Eip3009Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}
export type Proof =
  | { kind: 'eip3009'; network: string; memo: string; signature: string; authorization: Eip3009Authorization }
  | { kind: 'solana'; network: string; memo: string; transaction: string }
  | { kind: 'agent_wallet'; memo: string; agent_wallet_id: string; spend_attempt_id: string };

/** What a proof must match: the stored challenge. */
export interface ChallengeTerms {
  id: string;
  chain: 'ethereum' | 'solana';
  network: string;
  token: string;
  /** token contract, mint, or native symbol */
  asset: string;
  pay_to: string;
  amount_subunits: string;
}

const UINT = /^(0|[1-9]\d{0,77})$/;
const UINT256_MAX = (1n << 256n) - 1n;
const str = (v: unknown, max = 4096): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** Decodes the header value; throws ProofError('malformed') for anything that is not one of the forms. */
export function decodeProof(header: string | undefined | null): Proof {
  const raw = decodeHeader(header);
  const bad = (why: string) => new ProofError('malformed', `X-Service-Payment is not a valid proof: ${why}`);
  if (!raw) throw bad('expected base64 JSON');
  const payload = raw.payload as Record<string, unknown> | undefined;
  if (!str(raw.memo, 200)) throw bad('memo (the challenge id) is missing');
  if (!payload || typeof payload !== 'object') throw bad('payload is missing');
  if (raw.scheme === 'agent_wallet') {
    if (!str(payload.agent_wallet_id, 100) || !str(payload.spend_attempt_id, 100))
      throw bad('payload needs agent_wallet_id and spend_attempt_id');
    return { kind: 'agent_wallet', memo: raw.memo, agent_wallet_id: payload.agent_wallet_id, spend_attempt_id: payload.spend_attempt_id };
  }
  if (raw.scheme !== 'exact') throw bad("scheme must be 'exact' or 'agent_wallet'");
  if (raw.network !== 'testnet' && raw.network !== 'mainnet') throw bad('network must be testnet or mainnet');
  if (raw.chain === 'ethereum') {
    const a = payload.authorization as Record<string, unknown> | undefined;
    if (!str(payload.signature, 200) || !a || typeof a !== 'object') throw bad('payload needs signature and authorization');
    for (const k of ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'])
      if (!str(a[k], 100)) throw bad(`authorization.${k} is missing`);
    // uint256 fields: a larger value could never be signed or submitted (and would break the EIP-712 hash)
    for (const k of ['value', 'validAfter', 'validBefore'])
      if (!UINT.test(a[k] as string) || BigInt(a[k] as string) > UINT256_MAX)
        throw bad(`authorization.${k} must be a decimal uint256 string`);
    if (!isHexString(a.nonce, 32)) throw bad('authorization.nonce must be 32 bytes of hex');
    try {
      getAddress(a.from as string);
      getAddress(a.to as string);
    } catch {
      throw bad('authorization.from and .to must be addresses');
    }
    return {
      kind: 'eip3009',
      network: raw.network,
      memo: raw.memo,
      signature: payload.signature,
      authorization: a as unknown as Eip3009Authorization,
    };
  }
  if (raw.chain === 'solana') {
    if (!str(payload.transaction, 8192)) throw bad('payload.transaction (base64 wire transaction) is missing');
    return { kind: 'solana', network: raw.network, memo: raw.memo, transaction: payload.transaction };
  }
  throw bad("chain must be 'ethereum' or 'solana'");
}

// ---- EIP-3009 ------------------------------------------------------------------------------------------

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
};

/** The authorization nonce that binds a proof to a challenge. */
export const memoNonce = (memo: string): string => keccak256(toUtf8Bytes(memo));

function checkCommon(p: { network: string; memo: string }, c: ChallengeTerms): void {
  if (p.memo !== c.id) throw new ProofError('memo_mismatch', 'the proof is for another challenge');
  if (p.network !== c.network) throw new ProofError('wrong_network', `the challenge is on ${c.network}`);
}

/**
 * Verifies an EIP-3009 authorization against the challenge: payee, amount, nonce = keccak256(memo),
 * validity window (seconds), and the EIP-712 signature of `from` under the token's domain separator.
 * Returns the payer and the proof key (unique per token, payer and nonce).
 */
export function verifyEip3009(
  p: Extract<Proof, { kind: 'eip3009' }>,
  c: ChallengeTerms,
  domainSeparator: string,
  nowSeconds: number,
): { payer: string; proof_key: string } {
  checkCommon(p, c);
  if (c.chain !== 'ethereum' || c.token !== 'USDC')
    throw new ProofError('wrong_asset', 'an EIP-3009 authorization pays USDC on Ethereum only');
  const a = p.authorization;
  if (getAddress(a.to) !== getAddress(c.pay_to)) throw new ProofError('wrong_payee', 'authorization.to is not the challenge payTo');
  if (a.value !== c.amount_subunits) throw new ProofError('wrong_amount', `authorization.value must be ${c.amount_subunits}`);
  if (a.nonce.toLowerCase() !== memoNonce(c.id))
    throw new ProofError('memo_mismatch', 'authorization.nonce must be keccak256 of the challenge memo');
  if (BigInt(a.validAfter) >= BigInt(nowSeconds)) throw new ProofError('not_yet_valid', 'the authorization is not valid yet (validAfter)');
  if (BigInt(a.validBefore) <= BigInt(nowSeconds) + 5n)
    throw new ProofError('authorization_expired', 'the authorization has expired (validBefore)');
  const digest = keccak256(
    `0x1901${domainSeparator.slice(2)}${TypedDataEncoder.hashStruct('TransferWithAuthorization', TRANSFER_WITH_AUTHORIZATION_TYPES, a).slice(2)}`,
  );
  let signer: string;
  try {
    signer = recoverAddress(digest, Signature.from(p.signature));
  } catch {
    throw new ProofError('bad_signature', 'the authorization signature is not valid');
  }
  if (signer !== getAddress(a.from)) throw new ProofError('bad_signature', 'the authorization is not signed by authorization.from');
  return {
    payer: getAddress(a.from),
    proof_key: `eip3009:${c.network}:${c.asset.toLowerCase()}:${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`,
  };
}

/** v, r, s of the signature for transferWithAuthorization(…, v, r, s). */
export function splitSignature(signature: string): { v: number; r: string; s: string } {
  const sig = Signature.from(signature);
  return { v: sig.v, r: sig.r, s: sig.s };
}

// ---- Solana --------------------------------------------------------------------------------------------

export const MEMO_PROGRAMS = new Set(['MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo']);
export const TOKEN_PROGRAM = TOKEN_PROGRAM_ID;
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** the payer's compute budget is the gas wallet's cost: bounded */
export const MAX_COMPUTE_UNIT_LIMIT = 200_000;
export const MAX_COMPUTE_UNIT_PRICE = 5_000_000n;
export { associatedTokenAddress };

/** Ed25519 with node:crypto (a raw 32-byte key wrapped in its SPKI prefix). */
function ed25519Verify(sig: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  const key = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]),
    format: 'der',
    type: 'spki',
  });
  return verifySignature(null, message, key, sig);
}

const u64 = (data: Uint8Array, at: number): bigint => Buffer.from(data).readBigUInt64LE(at);

/**
 * Verifies a Solana payment transaction against the challenge. Allowed instructions: compute budget
 * (bounded), one memo with exactly the challenge id, and one payment: SPL `transferChecked` of the mint
 * into payTo's associated token account, or a system transfer of SOL to payTo. The fee payer must be the
 * gas wallet, appear in no instruction, and every other signature must be present and valid.
 * Returns the decoded transaction for the gas wallet to co-sign.
 */
export function verifySolana(
  p: Extract<Proof, { kind: 'solana' }>,
  c: ChallengeTerms,
  gasWallet: string,
): { payer: string; proof_key: string; tx: VersionedTransaction } {
  checkCommon(p, c);
  if (c.chain !== 'solana') throw new ProofError('wrong_asset', 'the challenge is not on Solana');
  let tx: VersionedTransaction;
  try {
    tx = VersionedTransaction.deserialize(Buffer.from(p.transaction, 'base64'));
  } catch {
    throw new ProofError('malformed', 'payload.transaction is not a Solana wire transaction');
  }
  const msg = tx.message;
  if (msg.addressTableLookups.length > 0) throw new ProofError('unexpected_instruction', 'address lookup tables are not accepted');
  const keys = msg.staticAccountKeys.map((k) => k.toBase58());
  if (keys[0] !== gasWallet) throw new ProofError('fee_payer_mismatch', `the fee payer must be the service's gas wallet ${gasWallet}`);
  let memoSeen = false;
  let payment: { payer: string } | null = null;
  for (const ix of msg.compiledInstructions) {
    const program = keys[ix.programIdIndex];
    const accounts = ix.accountKeyIndexes.map((i) => keys[i]);
    if (ix.accountKeyIndexes.includes(0)) throw new ProofError('fee_payer_in_instruction', 'the gas wallet must appear in no instruction');
    const data = ix.data;
    if (program === COMPUTE_BUDGET_PROGRAM) {
      if (data[0] === 2 && data.length === 5 && Buffer.from(data).readUInt32LE(1) <= MAX_COMPUTE_UNIT_LIMIT) continue;
      if (data[0] === 3 && data.length === 9 && u64(data, 1) <= MAX_COMPUTE_UNIT_PRICE) continue;
      throw new ProofError('unexpected_instruction', 'compute budget beyond the accepted bounds');
    }
    if (MEMO_PROGRAMS.has(program)) {
      if (memoSeen || Buffer.from(data).toString('utf8') !== c.id)
        throw new ProofError('memo_mismatch', 'the memo must be the challenge id, once');
      memoSeen = true;
      continue;
    }
    if (payment) throw new ProofError('unexpected_instruction', 'only one payment instruction is accepted');
    if (program === TOKEN_PROGRAM && data[0] === 12 && data.length === 10 && accounts.length >= 4) {
      const [, mint, destination, authority] = accounts;
      if (c.token === 'SOL' || mint !== c.asset) throw new ProofError('wrong_asset', `the transfer must be of ${c.asset}`);
      if (destination !== associatedTokenAddress(c.pay_to, c.asset))
        throw new ProofError('wrong_payee', "the transfer must go to payTo's associated token account");
      if (u64(data, 1).toString() !== c.amount_subunits)
        throw new ProofError('wrong_amount', `the transfer must be of ${c.amount_subunits}`);
      payment = { payer: authority };
      continue;
    }
    if (program === SYSTEM_PROGRAM && data.length === 12 && Buffer.from(data).readUInt32LE(0) === 2 && accounts.length === 2) {
      if (c.token !== 'SOL') throw new ProofError('wrong_asset', `the transfer must be of ${c.asset}`);
      if (accounts[1] !== c.pay_to) throw new ProofError('wrong_payee', 'the transfer must go to payTo');
      if (u64(data, 4).toString() !== c.amount_subunits)
        throw new ProofError('wrong_amount', `the transfer must be of ${c.amount_subunits}`);
      payment = { payer: accounts[0] };
      continue;
    }
    throw new ProofError('unexpected_instruction', `instruction of program ${program} is not accepted`);
  }
  if (!memoSeen) throw new ProofError('memo_mismatch', 'the transaction must carry the challenge id in a memo');
  if (!payment) throw new ProofError('wrong_amount', 'the transaction pays nothing');
  const signerIndex = keys.indexOf(payment.payer);
  if (signerIndex <= 0 || signerIndex >= msg.header.numRequiredSignatures)
    throw new ProofError('bad_signature', 'the payer must sign the transaction');
  const message = msg.serialize();
  for (let i = 1; i < msg.header.numRequiredSignatures; i++) {
    const sig = tx.signatures[i];
    if (!sig || sig.every((b) => b === 0) || !ed25519Verify(sig, message, new PublicKey(keys[i]).toBytes())) {
      throw new ProofError('bad_signature', 'a signature of the transaction is missing or not valid');
    }
  }
  return { payer: payment.payer, proof_key: `solana:${c.network}:${hexlify(tx.signatures[signerIndex])}`, tx };
}
