/**
 * x402 proofs: decoding and verification. A proof arrives in one of three wires, each naming the challenge
 * it pays (its id, the memo) where it can:
 *  - the spec's (X-Service-Payment, base64 JSON `{x402Version:1, scheme, chain, network, memo, payload}`);
 *  - x402 v2's PaymentPayload (PAYMENT-SIGNATURE: `{x402Version:2, accepted, payload}`, the challenge id in
 *    `accepted.extra.challengeId`), also what a facilitator is handed;
 *  - x402 v1's (X-PAYMENT: `{x402Version:1, scheme, network, payload}`, no challenge id: found by its terms).
 * The payloads: `exact` on Ethereum, an EIP-3009 transferWithAuthorization with any nonce (the token lets
 * each (from, nonce) pay once, and the proof key makes it redeem once); `exact` on Solana, a transaction
 * paying payTo, signed by the payer, fee payer = our gas wallet and in no instruction, with a bounded
 * compute-unit limit; `agent_wallet` (spec wire only), a spend attempt of an agent wallet of this service.
 * Pure: the token's EIP-712 domain separator, the gas wallet address and the clock come from the caller.
 */
import { TypedDataEncoder, getAddress, hexlify, keccak256, toUtf8Bytes, isHexString, Signature } from 'ethers';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { decodeHeader } from './challenge.ts';
import { replayKey } from './replay.ts';
import { associatedTokenAddress, TOKEN_PROGRAM_ID } from '../chains/clients.ts';
import { recoverSigner } from '../chains/ethereum/ecdsa.ts';

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
  | 'compute_limit_missing'
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
/** The wire a proof came in: the spec's, x402 v2's PaymentPayload, or x402 v1's. */
export type Wire = 'spec' | 'v2' | 'v1';
/**
 * `memo` is the id of the challenge the proof names (spec: its memo; v2: `accepted.extra.challengeId`);
 * null when the wire carries none (v1, or a v2 payload for a facilitator). `network` is as the wire says it
 * (spec: testnet or mainnet; v2: CAIP-2; v1: the ecosystem's names).
 */
export type Proof =
  | {
      kind: 'eip3009';
      wire: Wire;
      network: string;
      memo: string | null;
      signature: string;
      authorization: Eip3009Authorization;
      accepted?: Record<string, unknown>;
    }
  | { kind: 'solana'; wire: Wire; network: string; memo: string | null; transaction: string; accepted?: Record<string, unknown> }
  | { kind: 'agent_wallet'; wire: 'spec'; memo: string; agent_wallet_id: string; spend_attempt_id: string };

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
  /** the CAIP-2 id the challenge was offered under on the v2 wire (null: not offered there) */
  x402_network?: string | null;
}

const UINT = /^(0|[1-9]\d{0,77})$/;
const UINT256_MAX = (1n << 256n) - 1n;
const str = (v: unknown, max = 4096): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** Decodes a proof header (X-Service-Payment, PAYMENT-SIGNATURE or X-PAYMENT); throws ProofError('malformed') for anything else. */
export function decodeProof(header: string | undefined | null): Proof {
  const raw = decodeHeader(header);
  if (!raw) throw new ProofError('malformed', 'the payment proof is not valid: expected base64 JSON');
  return decodePayload(raw);
}

/** A decoded proof object of any of the three wires (a facilitator is handed the v2 PaymentPayload as JSON). */
export function decodePayload(raw: Record<string, unknown>): Proof {
  const bad = (why: string) => new ProofError('malformed', `the payment proof is not valid: ${why}`);
  const payload = raw.payload as Record<string, unknown> | undefined;
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw bad('payload is missing');
  let wire: Wire;
  let memo: string | null;
  let network: string;
  let chain: unknown;
  let accepted: Record<string, unknown> | undefined;
  if (raw.x402Version === 2) {
    accepted = raw.accepted as Record<string, unknown> | undefined;
    if (!accepted || typeof accepted !== 'object' || Array.isArray(accepted)) throw bad('accepted (the requirements paid) is missing');
    if (accepted.scheme !== 'exact') throw bad("accepted.scheme must be 'exact'");
    if (!str(accepted.network, 100) || !accepted.network.includes(':')) throw bad('accepted.network must be a CAIP-2 id');
    const extra = accepted.extra as Record<string, unknown> | undefined;
    wire = 'v2';
    memo = extra && typeof extra === 'object' && str(extra.challengeId, 200) ? extra.challengeId : null;
    network = accepted.network;
    chain = network.startsWith('eip155:') ? 'ethereum' : network.startsWith('solana:') ? 'solana' : null;
  } else if (raw.x402Version === 1 && raw.memo === undefined && raw.chain === undefined) {
    if (raw.scheme !== 'exact') throw bad("scheme must be 'exact'");
    if (!str(raw.network, 100)) throw bad('network is missing');
    wire = 'v1';
    memo = null;
    network = raw.network;
    chain = 'authorization' in payload ? 'ethereum' : 'transaction' in payload ? 'solana' : null;
  } else {
    if (!str(raw.memo, 200)) throw bad('memo (the challenge id) is missing');
    if (raw.scheme === 'agent_wallet') {
      if (!str(payload.agent_wallet_id, 100) || !str(payload.spend_attempt_id, 100))
        throw bad('payload needs agent_wallet_id and spend_attempt_id');
      return {
        kind: 'agent_wallet',
        wire: 'spec',
        memo: raw.memo,
        agent_wallet_id: payload.agent_wallet_id,
        spend_attempt_id: payload.spend_attempt_id,
      };
    }
    if (raw.scheme !== 'exact') throw bad("scheme must be 'exact' or 'agent_wallet'");
    if (raw.network !== 'testnet' && raw.network !== 'mainnet') throw bad('network must be testnet or mainnet');
    wire = 'spec';
    memo = raw.memo;
    network = raw.network;
    chain = raw.chain;
  }
  if (chain === 'ethereum') {
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
    const authorization: Eip3009Authorization = {
      from: a.from as string,
      to: a.to as string,
      value: a.value as string,
      validAfter: a.validAfter as string,
      validBefore: a.validBefore as string,
      nonce: a.nonce as string,
    };
    return { kind: 'eip3009', wire, network, memo, signature: payload.signature, authorization, ...(accepted ? { accepted } : {}) };
  }
  if (chain === 'solana') {
    if (!str(payload.transaction, 8192)) throw bad('payload.transaction (base64 wire transaction) is missing');
    return { kind: 'solana', wire, network, memo, transaction: payload.transaction, ...(accepted ? { accepted } : {}) };
  }
  throw bad(wire === 'spec' ? "chain must be 'ethereum' or 'solana'" : 'the network is neither eip155 nor solana');
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

/** built once: TypedDataEncoder.hashStruct builds a new encoder of the types on every call */
const AUTHORIZATION_ENCODER = TypedDataEncoder.from(TRANSFER_WITH_AUTHORIZATION_TYPES);

/** The authorization nonce the spec's proofs use (keccak256 of the memo); any other nonce is accepted too. */
export const memoNonce = (memo: string): string => keccak256(toUtf8Bytes(memo));

function checkCommon(p: { wire: Wire; network: string; memo: string | null }, c: ChallengeTerms): void {
  if (p.memo !== null && p.memo !== c.id) throw new ProofError('memo_mismatch', 'the proof is for another challenge');
  // v1 names networks its own way; its signature (EIP-712 chain id, Solana blockhash) binds the chain anyway
  const expected = p.wire === 'spec' ? c.network : p.wire === 'v2' ? c.x402_network : null;
  if (expected && p.network !== expected) throw new ProofError('wrong_network', `the challenge is on ${expected}`);
}

/**
 * Verifies an EIP-3009 authorization against the challenge: payee, amount, validity window (seconds), and
 * the EIP-712 signature of `from` under the token's domain separator. Any nonce: what makes it pay once is
 * the token (each (from, nonce) once) and the proof key (unique per token, payer and nonce), which is
 * returned with the payer.
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
  if (BigInt(a.validAfter) >= BigInt(nowSeconds)) throw new ProofError('not_yet_valid', 'the authorization is not valid yet (validAfter)');
  if (BigInt(a.validBefore) <= BigInt(nowSeconds) + 5n)
    throw new ProofError('authorization_expired', 'the authorization has expired (validBefore)');
  const digest = keccak256(`0x1901${domainSeparator.slice(2)}${AUTHORIZATION_ENCODER.hashStruct('TransferWithAuthorization', a).slice(2)}`);
  let signer: string;
  try {
    signer = recoverSigner(digest, Signature.from(p.signature));
  } catch {
    throw new ProofError('bad_signature', 'the authorization signature is not valid');
  }
  if (signer !== getAddress(a.from)) throw new ProofError('bad_signature', 'the authorization is not signed by authorization.from');
  return {
    payer: getAddress(a.from),
    proof_key: replayKey.eip3009(c.network, c.asset, a.from, a.nonce),
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
/**
 * The payer's compute budget is the gas wallet's cost, so a limit is required and bounded (without one the
 * runtime grants 200,000 units per instruction and the priority fee is charged on all of them).
 */
export const MAX_COMPUTE_UNIT_LIMIT = 200_000;
/** a memo the payer chose (v2 clients add a random one so equal payments differ) */
export const MAX_MEMO_BYTES = 256;
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
 * Verifies a Solana payment transaction against the challenge. Allowed instructions: a compute-unit limit
 * (required, bounded) and price (bounded), one memo, and one payment: SPL `transferChecked` of the mint
 * into payTo's associated token account, or a system transfer of SOL to payTo. The memo of a spec proof
 * is exactly the challenge id (it binds the transaction to it); a v2 or v1 payer may write any memo (the
 * challenge is named in `accepted`, and the transaction's signature is its proof key). The fee payer must
 * be the gas wallet, appear in no instruction, and every other signature must be present and valid.
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
  let limitSeen = false;
  let priceSeen = false;
  let payment: { payer: string } | null = null;
  for (const ix of msg.compiledInstructions) {
    const program = keys[ix.programIdIndex];
    const accounts = ix.accountKeyIndexes.map((i) => keys[i]);
    if (ix.accountKeyIndexes.includes(0)) throw new ProofError('fee_payer_in_instruction', 'the gas wallet must appear in no instruction');
    const data = ix.data;
    if (program === COMPUTE_BUDGET_PROGRAM) {
      if (!limitSeen && data[0] === 2 && data.length === 5 && Buffer.from(data).readUInt32LE(1) <= MAX_COMPUTE_UNIT_LIMIT) {
        limitSeen = true;
        continue;
      }
      if (!priceSeen && data[0] === 3 && data.length === 9 && u64(data, 1) <= MAX_COMPUTE_UNIT_PRICE) {
        priceSeen = true;
        continue;
      }
      throw new ProofError('unexpected_instruction', 'compute budget beyond the accepted bounds');
    }
    if (MEMO_PROGRAMS.has(program)) {
      if (memoSeen) throw new ProofError('memo_mismatch', 'one memo at most');
      if (p.wire === 'spec' ? Buffer.from(data).toString('utf8') !== c.id : data.length > MAX_MEMO_BYTES)
        throw new ProofError(
          'memo_mismatch',
          p.wire === 'spec' ? 'the memo must be the challenge id' : `a memo of ${MAX_MEMO_BYTES} bytes at most`,
        );
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
  if (!memoSeen && p.wire === 'spec') throw new ProofError('memo_mismatch', 'the transaction must carry the challenge id in a memo');
  if (!limitSeen)
    throw new ProofError(
      'compute_limit_missing',
      `a compute-unit limit (SetComputeUnitLimit, at most ${MAX_COMPUTE_UNIT_LIMIT}) is required`,
    );
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
  return { payer: payment.payer, proof_key: replayKey.solana(c.network, hexlify(tx.signatures[signerIndex])), tx };
}
