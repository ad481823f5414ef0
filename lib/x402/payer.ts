/**
 * Payer side of the x402 proofs, for clients written in TypeScript (and the tests): an EIP-3009
 * authorization signed by any Ethereum key, and a Solana transfer with the memo signed by the payer
 * with the service's gas wallet as fee payer. Both return the X-Service-Payment header value.
 */
import { getAddress, type Signer, type TypedDataDomain } from 'ethers';
import {
  ComputeBudgetProgram,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
  type Keypair,
} from '@solana/web3.js';
import { encodeHeader, type X402Challenge } from './challenge.ts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES, memoNonce, associatedTokenAddress, TOKEN_PROGRAM, SYSTEM_PROGRAM } from './proof.ts';

export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

export interface Eip3009Options {
  chainId: number | bigint;
  /** EIP-712 domain of the token: name and version (USDC: "USD Coin" / "2"; TestUSDC: "Test USD Coin" / "2") */
  tokenName: string;
  tokenVersion: string;
  /** seconds the authorization stays valid (default 300) */
  validForSeconds?: number;
  nowSeconds?: number;
}

/** Signs transferWithAuthorization(from = signer, to = payTo, value = amount, nonce = keccak256(memo)). */
export async function signEip3009Proof(signer: Signer, challenge: X402Challenge, o: Eip3009Options): Promise<string> {
  const now = o.nowSeconds ?? Math.floor(Date.now() / 1000);
  const domain: TypedDataDomain = {
    name: o.tokenName,
    version: o.tokenVersion,
    chainId: o.chainId,
    verifyingContract: getAddress(challenge.asset!),
  };
  const authorization = {
    from: await signer.getAddress(),
    to: getAddress(challenge.payTo!),
    value: challenge.amount!,
    validAfter: String(now - 60),
    validBefore: String(now + (o.validForSeconds ?? 300)),
    nonce: memoNonce(challenge.memo!),
  };
  const signature = await signer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  return encodeHeader({
    x402Version: 1,
    scheme: 'exact',
    chain: 'ethereum',
    network: challenge.network,
    memo: challenge.memo,
    payload: { signature, authorization },
  });
}

export interface SolanaProofOptions {
  /** the service's gas wallet (fee payer): GET /v1/x402/fee-payers or the challenge response */
  feePayer: string;
  /** a recent blockhash from the chain */
  recentBlockhash: string;
}

/** the compute-unit limit a proof states (required by the service; a transfer and a memo use far less) */
export const PROOF_COMPUTE_UNIT_LIMIT = 50_000;

/** A transfer of the challenge's amount to payTo with the memo, signed by the payer only. */
export function buildSolanaProof(payer: Keypair, challenge: X402Challenge, o: SolanaProofOptions): string {
  const amount = BigInt(challenge.amount!);
  const instructions: TransactionInstruction[] = [ComputeBudgetProgram.setComputeUnitLimit({ units: PROOF_COMPUTE_UNIT_LIMIT })];
  if (challenge.asset === 'SOL') {
    const data = Buffer.alloc(12);
    data.writeUInt32LE(2, 0);
    data.writeBigUInt64LE(amount, 4);
    instructions.push(
      new TransactionInstruction({
        programId: new PublicKey(SYSTEM_PROGRAM),
        data,
        keys: [
          { pubkey: payer.publicKey, isSigner: true, isWritable: true },
          { pubkey: new PublicKey(challenge.payTo!), isSigner: false, isWritable: true },
        ],
      }),
    );
  } else {
    const mint = challenge.asset!;
    const data = Buffer.alloc(10);
    data.writeUInt8(12, 0);
    data.writeBigUInt64LE(amount, 1);
    data.writeUInt8(6, 9); // USDC decimals
    instructions.push(
      new TransactionInstruction({
        programId: new PublicKey(TOKEN_PROGRAM),
        data,
        keys: [
          { pubkey: new PublicKey(associatedTokenAddress(payer.publicKey.toBase58(), mint)), isSigner: false, isWritable: true },
          { pubkey: new PublicKey(mint), isSigner: false, isWritable: false },
          { pubkey: new PublicKey(associatedTokenAddress(challenge.payTo!, mint)), isSigner: false, isWritable: true },
          { pubkey: payer.publicKey, isSigner: true, isWritable: false },
        ],
      }),
    );
  }
  instructions.push(
    new TransactionInstruction({ programId: new PublicKey(MEMO_PROGRAM), keys: [], data: Buffer.from(challenge.memo!, 'utf8') }),
  );
  const message = new TransactionMessage({
    payerKey: new PublicKey(o.feePayer),
    recentBlockhash: o.recentBlockhash,
    instructions,
  }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  tx.sign([payer]);
  return encodeHeader({
    x402Version: 1,
    scheme: 'exact',
    chain: 'solana',
    network: challenge.network,
    memo: challenge.memo,
    payload: { transaction: Buffer.from(tx.serialize()).toString('base64') },
  });
}
