/**
 * What a transaction did, as reconciliation compares it: the net balance change it caused per owner
 * address and asset (`native`, or a token contract / mint), read from the chain (lib/treasury/reconcile/
 * ethereum.ts and solana.ts decode it), and what an outbox row meant it to do (its intent). Pure.
 *
 * Balances, not instruction shapes: every way of moving money shows the same (a transfer, a
 * transferChecked, a contract call that emits Transfer), and anything else the transaction moved shows
 * too. Solana token accounts are counted under their owner; lamports put into token accounts the
 * transaction created are its rent, paid by the fee payer.
 */
import { Interface, getAddress } from 'ethers';
import type { ChainTxDoc } from '../../chains/broadcast/types.ts';
import type { KeyRef } from '../../chains/keys.ts';

export const NATIVE = 'native';

export interface TxEffect {
  hash: string;
  /** block number (Ethereum) or slot (Solana) it landed in */
  block: number;
  /** it succeeded (a failed one still paid its fee) */
  ok: boolean;
  /** network fee in the native coin's smallest unit */
  fee: bigint;
  feePayer: string;
  /** net change per `<address>|<asset>` */
  deltas: Map<string, bigint>;
  /** Solana: lamports put into token accounts this transaction created (paid by the fee payer) */
  rent: bigint;
  /** Ethereum: sender and nonce */
  from?: string;
  nonce?: number;
  to?: string | null;
}

export const deltaKey = (address: string, asset: string) => `${address}|${asset}`;

export function addDelta(m: Map<string, bigint>, address: string, asset: string, v: bigint): void {
  if (v === 0n) return;
  const k = deltaKey(address, asset);
  const next = (m.get(k) ?? 0n) + v;
  if (next === 0n) m.delete(k);
  else m.set(k, next);
}

export const deltaOf = (e: Pick<TxEffect, 'deltas'>, address: string, asset: string): bigint =>
  e.deltas.get(deltaKey(address, asset)) ?? 0n;

/** An Ethereum address in checksum form (so that keys compare), anything else as it is. */
export const normalAddress = (chain: string, a: string): string => (chain === 'ethereum' ? getAddress(a) : a);

const EIP3009 = new Interface([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
]);

/** What a row's x402 settlement was for (its challenge), for intents that do not carry the amount. */
export interface ChallengeTerms {
  amount_subunits: string;
  /** token contract, mint, or the native symbol */
  asset: string;
  pay_to: string;
  token: string;
}

export interface ExpectedEffect {
  /** the value moves of the intent (fees aside): `<address>|<asset>` → change */
  deltas: Map<string, bigint>;
  /** who pays the fee */
  feePayer: string;
  /** Solana SPL: the fee payer may also have paid rent for the receiver's new token account */
  rentAllowed: boolean;
  /** a plain words summary for messages */
  summary: string;
}

/**
 * The effect an outbox row meant: from −amount, to +amount in its asset, and the fee on its payer.
 * `addressOf` names the key of a Solana intent's fee payer (the gas wallet, or the sending wallet itself);
 * `challenge` the x402 challenge of a `cosign` row. null when the intent cannot say (an unknown call).
 */
export function expectedEffect(
  row: Pick<ChainTxDoc, 'chain' | 'intent' | 'from_address' | 'to_address' | 'attempts' | 'tx_hash'>,
  addressOf: (ref: KeyRef) => string,
  challenge?: ChallengeTerms | null,
): ExpectedEffect | null {
  const i = row.intent;
  const deltas = new Map<string, bigint>();
  const move = (from: string, to: string, asset: string, amount: bigint) => {
    addDelta(deltas, normalAddress(row.chain, from), asset, -amount);
    addDelta(deltas, normalAddress(row.chain, to), asset, amount);
  };
  const from = row.from_address;
  if (i.chain === 'ethereum') {
    if (i.kind === 'native') {
      // what the landed attempt sent (a sweep sends its amount less the fee)
      const attempt = row.attempts.find((a) => a.hash === row.tx_hash) ?? row.attempts[row.attempts.length - 1];
      const value = BigInt(attempt?.value ?? i.value);
      move(from, i.to, NATIVE, value);
      return { deltas, feePayer: normalAddress('ethereum', from), rentAllowed: false, summary: `${value} wei ${from} → ${i.to}` };
    }
    if (i.kind === 'erc20') {
      const token = getAddress(i.token);
      move(from, i.to, token, BigInt(i.amount));
      return { deltas, feePayer: getAddress(from), rentAllowed: false, summary: `${i.amount} of ${token} ${from} → ${i.to}` };
    }
    // a call: only transferWithAuthorization is known (x402 settlement by the gas wallet)
    let parsed: ReturnType<Interface['parseTransaction']>;
    try {
      parsed = EIP3009.parseTransaction({ data: i.data });
    } catch {
      parsed = null;
    }
    if (!parsed) return null;
    const [f, t, v] = parsed.args as unknown as [string, string, bigint];
    const token = getAddress(i.to);
    move(f, t, token, BigInt(v));
    return { deltas, feePayer: getAddress(from), rentAllowed: false, summary: `${v} of ${token} ${f} → ${t} (authorization)` };
  }
  if (i.kind === 'native') {
    move(from, i.to, NATIVE, BigInt(i.lamports));
    return { deltas, feePayer: addressOf(i.fee_payer), rentAllowed: false, summary: `${i.lamports} lamports ${from} → ${i.to}` };
  }
  if (i.kind === 'spl') {
    move(from, i.to, i.mint, BigInt(i.amount));
    const rentAllowed = i.create_account !== false;
    return { deltas, feePayer: addressOf(i.fee_payer), rentAllowed, summary: `${i.amount} of ${i.mint} ${from} → ${i.to}` };
  }
  // cosign (x402 on Solana): the payer's transfer to pay_to, for the challenge's amount
  if (!challenge) return null;
  const asset = challenge.asset === 'SOL' ? NATIVE : challenge.asset;
  move(i.from_address, i.to_address, asset, BigInt(challenge.amount_subunits));
  return {
    deltas,
    feePayer: addressOf(i.fee_payer),
    rentAllowed: false,
    summary: `${challenge.amount_subunits} ${challenge.token} ${i.from_address} → ${i.to_address} (x402)`,
  };
}

export interface EffectMismatch {
  address: string;
  asset: string;
  expected: bigint;
  actual: bigint;
}

/**
 * Where the chain disagrees with the intent: every address the intent names, plus every `watched`
 * address (the platform's own) whose balance the transaction changed. The fee payer is expected to lose
 * exactly the fee (and the rent where allowed, which the platform-money check accounts for).
 */
export function compareEffect(expected: ExpectedEffect, actual: TxEffect, watched: (address: string) => boolean): EffectMismatch[] {
  const want = new Map(expected.deltas);
  addDelta(want, expected.feePayer, NATIVE, -actual.fee);
  if (expected.rentAllowed) addDelta(want, expected.feePayer, NATIVE, -actual.rent);
  const keys = new Set<string>(want.keys());
  for (const [k, v] of actual.deltas) {
    const address = k.slice(0, k.indexOf('|'));
    if (v !== 0n && watched(address)) keys.add(k);
  }
  const out: EffectMismatch[] = [];
  for (const k of [...keys].sort()) {
    const e = want.get(k) ?? 0n;
    const a = actual.deltas.get(k) ?? 0n;
    if (e !== a) {
      const bar = k.indexOf('|');
      out.push({ address: k.slice(0, bar), asset: k.slice(bar + 1), expected: e, actual: a });
    }
  }
  return out;
}
