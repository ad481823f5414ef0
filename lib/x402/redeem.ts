/**
 * x402 redemption: verify a proof against its challenge, settle it, and consume the challenge once.
 *
 * - The redemption row's id is the challenge id and its `proof_key` (the proof's replay key, ./replay.ts)
 *   is unique: of concurrent redeems exactly one insert wins; every other proof for that challenge, and the
 *   same proof again, is refused.
 * - One payment per challenge across every proof type: an on-chain settlement and an agent spend both
 *   insert the challenge's row in `x402_agent_payments` (CHALLENGE_PAYMENTS) with what they write, so of an
 *   EIP-3009 redeem in flight and an agent spend of the same challenge exactly one goes through.
 * - An EIP-3009 authorization someone else submitted first (a front-run) still paid payTo: the token's
 *   `AuthorizationUsed` log of that (from, nonce), followed by its Transfer to payTo of the amount, settles
 *   the redemption with that transaction (lib/x402/chain-facts.ts), credited once like any other.
 * - The settlement's network fee is booked in the same write (lib/x402/costs.ts), also when our transaction
 *   landed and reverted (the payer's balance gone by then): the gas wallet paid for it all the same.
 * - On-chain proofs go through the transaction outbox (lib/chains/broadcast): the gas wallet's signed
 *   transaction (row `x402:<challenge id>` in `chain_txs`) is written in the same write as the redemption
 *   row (status `settling`), before the first send; it is re-sent unchanged until it lands.
 * - Settle before serving: only a confirmed settlement answers `settled`. One that does not confirm within
 *   the wait answers `pending` (never a fresh 402: the payer must not pay twice); the same proof presented
 *   again later gets the resource once the settlement confirms, exactly once (`served`).
 * - A settled redemption credits the merchant's wallet in the ledger (a posted `deposit` transfer from
 *   `sys:chain`, id `x402:<challenge id>`) in the same write that consumes the challenge. An agent-wallet
 *   proof has already moved the money inside the ledger (its spend attempt's transfer).
 */
import { createHash } from 'node:crypto';
import { isDuplicate, type Doc, type Store, type WriteOp } from '../store/port.ts';
import { retryOnConflict } from '../core/retry.ts';
import { LedgerBatch, TRANSFERS, accountId, walletAccount } from '../ledger/index.ts';
import { encodeHeader } from './challenge.ts';
import { decodeProof, verifyEip3009, verifySolana, ProofError, type Eip3009Authorization, type Proof } from './proof.ts';
import { domainSeparator, eip3009Intent, solanaCosignIntent } from './settle.ts';
import type { AuthorizationUse } from './chain-facts.ts';
import { bookSettlementCost } from './costs.ts';
import { settledEventOp } from './events.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../chains/broadcast/types.ts';
import type { Broadcaster } from '../chains/broadcast/outbox.ts';
import type { SpendAttemptDoc } from '../spend/attempts.ts';
import { replayKey } from './replay.ts';
import { forgetChallenge, knownChallenge } from './known.ts';
import { CHALLENGES, REDEMPTIONS, CHALLENGE_PAYMENTS, type ChallengeDoc, type RedemptionDoc, type RedeemResult } from './model.ts';

export interface RedeemDeps {
  store: Store;
  broadcaster: Broadcaster;
  /** the RPC URL of a chain and network (null: not configured) */
  rpcUrl(chain: string, network: string): string | null;
  /** the gas wallet address (the Solana fee payer) */
  gasWallet(chain: 'ethereum' | 'solana', network: string): string;
  /** the token's record of an EIP-3009 authorization used on chain (lib/x402/chain-facts.ts authorizationUse) */
  authorizationUse(network: string, token: string, a: Eip3009Authorization): Promise<AuthorizationUse | null>;
  now(): Date;
  /** runs a pending agent spend's ledger execution now (the agent-wallet actor) */
  executeAttempt(attemptId: string, walletId: string): Promise<SpendAttemptDoc>;
  /** how long a redeem waits for its settlement to confirm before answering pending */
  settleTimeoutMs: number;
  pollMs?: number;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export class X402Redeemer {
  private d: RedeemDeps;

  constructor(deps: RedeemDeps) {
    this.d = deps;
  }

  private result(c: ChallengeDoc, r: RedemptionDoc): RedeemResult {
    const settled = r.status === 'settled';
    // the v2 SettleResponse (network in CAIP-2 where the challenge was offered so); the rest is additive
    const settle_response = {
      success: settled,
      transaction: r.tx_hash ?? '',
      network: c.x402_network ?? c.network,
      payer: r.payer,
      challenge_id: c.id,
      status: settled ? ('settled' as const) : ('pending' as const),
      chain: c.chain,
    };
    return {
      challenge_id: c.id,
      status: settle_response.status,
      payer: r.payer,
      amount_subunits: c.amount_subunits,
      ...(r.tx_hash ? { tx_hash: r.tx_hash } : {}),
      settled_at: r.settled_at,
      settle_response,
      payment_response: encodeHeader(settle_response),
    };
  }

  async redeem(header: string, resource: string, merchantId: string): Promise<RedeemResult> {
    const proof = decodeProof(header);
    const challenge = await this.challengeOf(proof, resource, merchantId);
    if (resource !== challenge.resource) throw new ProofError('wrong_resource', 'the proof pays for another resource');
    return this.settle(challenge, proof, sha(header.trim()));
  }

  /** The challenge a proof names; a v1 proof names none: an open one of this resource with its terms. */
  private async challengeOf(proof: Proof, resource: string, merchantId: string): Promise<ChallengeDoc> {
    const { store } = this.d;
    if (proof.memo !== null) {
      const c = await knownChallenge(store, proof.memo);
      if (!c || c.merchant_id !== merchantId) throw new ProofError('unknown_challenge', 'no challenge of yours has this memo');
      return c;
    }
    const terms =
      proof.kind === 'eip3009' ? { pay_to: proof.authorization.to, amount: proof.authorization.value } : { pay_to: null, amount: null };
    const now = this.d.now().toISOString();
    const open = await store.find<ChallengeDoc>(CHALLENGES, { merchant_id: merchantId, resource, status: 'open' } as never, {
      sort: 'id',
      desc: true,
      limit: 20,
    });
    for (const c of open) {
      if (c.expires_at <= now || (await store.get(REDEMPTIONS, c.id)) || (await store.get(CHALLENGE_PAYMENTS, c.id))) continue;
      if (terms.amount !== null && (terms.amount !== c.amount_subunits || terms.pay_to!.toLowerCase() !== c.pay_to.toLowerCase())) continue;
      return c;
    }
    throw new ProofError('unknown_challenge', 'no open challenge of yours for this resource matches the proof');
  }

  /**
   * Verifies the proof against the challenge and settles it: what redeem does after finding the challenge,
   * and what the facilitator does with the challenge it records for a payment it is handed.
   */
  async settle(challenge: ChallengeDoc, proof: Proof, proofHash: string): Promise<RedeemResult> {
    const { store } = this.d;
    // an agent wallet has paid already (its spend is reserved only while the challenge is open): checked
    // there; a redemption already made is read only when the proof does not pay (the insert refuses a replay)
    if (proof.kind === 'agent_wallet')
      return this.redeemAgent(challenge, proof, proofHash).catch(async (e: unknown) => {
        const existing = e instanceof ProofError ? await store.get<RedemptionDoc>(REDEMPTIONS, challenge.id) : null;
        if (existing) return this.continueExisting(challenge, existing, proofHash);
        throw e;
      });
    const existing = await store.get<RedemptionDoc>(REDEMPTIONS, challenge.id);
    if (existing) return this.continueExisting(challenge, existing, proofHash);
    const now = this.d.now();
    if (challenge.expires_at <= now.toISOString())
      throw new ProofError('challenge_expired', 'the challenge has expired; ask for a new one');

    if (challenge.asset === challenge.token && challenge.token === 'USDC')
      throw new ProofError(
        'wrong_asset',
        `no USDC token is configured on ${challenge.chain} ${challenge.network}: only agent wallets of this service can pay`,
      );
    const rpcUrl = this.d.rpcUrl(challenge.chain, challenge.network);
    if (!rpcUrl) throw new ProofError('wrong_network', `${challenge.chain} ${challenge.network} is not configured`);
    let payer: string;
    let proofKey: string;
    let intent: ReturnType<typeof eip3009Intent>;
    if (proof.kind === 'eip3009') {
      if (challenge.chain !== 'ethereum') throw new ProofError('wrong_asset', 'the challenge is not on Ethereum');
      ({ payer, proof_key: proofKey } = verifyEip3009(
        proof,
        challenge,
        await domainSeparator(rpcUrl, challenge.asset),
        Math.floor(now.getTime() / 1000),
      ));
      intent = eip3009Intent(challenge.network, challenge.asset, proof.authorization, proof.signature);
    } else {
      const v = verifySolana(proof, challenge, this.d.gasWallet('solana', challenge.network));
      ({ payer, proof_key: proofKey } = v);
      intent = solanaCosignIntent(challenge.network, v.tx, v.payer, challenge.pay_to);
    }
    const txId = `x402:${challenge.id}`;
    const row: RedemptionDoc = {
      id: challenge.id,
      merchant_id: challenge.merchant_id,
      proof_key: proofKey,
      proof_hash: proofHash,
      kind: proof.kind,
      payer,
      chain: challenge.chain,
      network: challenge.network,
      status: 'settling',
      served: false,
      chain_tx_id: txId,
      tx_hash: null,
      spend_attempt_id: null,
      authorization: proof.kind === 'eip3009' ? proof.authorization : null,
      next_check_at: new Date(now.getTime() + 5_000).toISOString(),
      failure_reason: null,
      created_at: now.toISOString(),
      settled_at: null,
    };
    let created: boolean;
    try {
      // the signed transaction, the redemption and the challenge's one payment in one write
      ({ created } = await this.d.broadcaster.create(
        { id: txId, chain: challenge.chain, network: challenge.network, purpose: 'x402', ref: challenge.id, intent },
        // refused before anything is written when the challenge or the proof is taken: no bytes without a row
        async () => {
          await this.refuseTaken(challenge.id, proofKey);
          return this.claimOps(row);
        },
      ));
    } catch (e) {
      if (e instanceof ProofError) throw e;
      await this.refuseTaken(challenge.id, proofKey);
      // Ethereum signs after a simulation (estimateGas): a refused authorization ends here, nothing written,
      // unless the token shows it was used by someone else, paying payTo all the same
      if (proof.kind === 'eip3009') {
        const use = await this.d.authorizationUse(challenge.network, challenge.asset, proof.authorization).catch(() => null);
        if (use) return this.frontRun(challenge, { ...row, chain_tx_id: null, tx_hash: use.tx_hash }, use);
      }
      throw new ProofError(
        'settlement_failed',
        `the settlement cannot be made: ${String((e as { shortMessage?: string }).shortMessage ?? (e as Error).message).slice(0, 160)}`,
      );
    }
    const mine = await store.get<RedemptionDoc>(REDEMPTIONS, challenge.id);
    if (!created || !mine || mine.proof_hash !== proofHash) await this.refuseTaken(challenge.id, proofKey, true);
    return this.await(challenge, true);
  }

  /** the redemption and the challenge's one payment (CHALLENGE_PAYMENTS), inserted together */
  private claimOps(row: RedemptionDoc): WriteOp[] {
    return [
      { op: 'insert', coll: REDEMPTIONS, doc: row },
      {
        op: 'insert',
        coll: CHALLENGE_PAYMENTS,
        doc: { id: row.id, attempt_id: null, proof_key: row.proof_key, created_at: row.created_at },
      },
    ];
  }

  /** Refuses when someone redeemed this challenge, paid it from an agent wallet, or redeemed this proof elsewhere. */
  private async refuseTaken(challengeId: string, proofKey: string, always = false): Promise<void> {
    const { store } = this.d;
    if ((await store.get(REDEMPTIONS, challengeId)) || (await store.get(CHALLENGE_PAYMENTS, challengeId)))
      throw new ProofError('already_redeemed', 'this challenge has already been paid');
    if (await store.findOne(REDEMPTIONS, { proof_key: proofKey }))
      throw new ProofError('already_redeemed', 'this proof has already been redeemed');
    if (always) throw new ProofError('already_redeemed', 'this challenge has already been redeemed');
  }

  /**
   * A front-run: the authorization was used by another transaction that paid payTo the amount. The
   * redemption is written with that transaction (no outbox row of ours) and settles when it is final.
   */
  private async frontRun(c: ChallengeDoc, row: RedemptionDoc, use: AuthorizationUse): Promise<RedeemResult> {
    try {
      await this.d.store.write(this.claimOps(row));
    } catch (e) {
      if (!isDuplicate(e)) throw e;
      await this.refuseTaken(c.id, row.proof_key, true);
    }
    if (use.final) {
      const done = await this.finish(c.id, true, use.tx_hash, null);
      return done.mine ? this.result(c, done.doc) : this.serveOnce(c);
    }
    return this.await(c, true);
  }

  /** The same proof again: serve a settlement that finished after its redeem answered pending, once. */
  private async continueExisting(c: ChallengeDoc, r: RedemptionDoc, proofHash: string): Promise<RedeemResult> {
    if (r.proof_hash !== proofHash) throw new ProofError('already_redeemed', 'this challenge has already been redeemed');
    if (r.status === 'failed') throw new ProofError('settlement_failed', 'the settlement failed on chain');
    if (r.status === 'settled') {
      if (r.served) throw new ProofError('already_redeemed', 'this proof has already been redeemed');
      return this.serveOnce(c);
    }
    return this.await(c, true);
  }

  private async serveOnce(c: ChallengeDoc): Promise<RedeemResult> {
    return retryOnConflict(async () => {
      const r = (await this.d.store.get<RedemptionDoc>(REDEMPTIONS, c.id))!;
      if (r.served) throw new ProofError('already_redeemed', 'this proof has already been redeemed');
      await this.d.store.write([{ op: 'cas', coll: REDEMPTIONS, doc: { ...r, served: true }, expected: r.version ?? 0 }]);
      return this.result(c, { ...r, served: true });
    });
  }

  /** Moves the settlement on until it is final or the wait is over; then settles, fails or answers pending. */
  private async await(c: ChallengeDoc, serve: boolean): Promise<RedeemResult> {
    const deadline = Date.now() + this.d.settleTimeoutMs;
    for (let round = 0; ; round++) {
      const r = (await this.d.store.get<RedemptionDoc>(REDEMPTIONS, c.id))!;
      if (r.status === 'settled') return serve ? this.serveOnce(c) : this.result(c, r);
      if (r.status === 'failed') throw new ProofError('settlement_failed', `the settlement failed on chain: ${r.failure_reason ?? ''}`);
      const done = await this.progress(r, serve);
      if (done) return done.mine || !serve ? this.result(c, done.doc) : this.serveOnce(c);
      if (Date.now() >= deadline) return this.result(c, r);
      // a chain that mines at once answers within a few short polls; a slow one is polled less often
      await new Promise((res) => setTimeout(res, this.d.pollMs ?? Math.min(250, 20 * 2 ** round)));
    }
  }

  /** One step of a settling redemption: its outbox row, or (a front-run) the token's record. */
  private async progress(r: RedemptionDoc, serve: boolean): Promise<{ doc: RedemptionDoc; mine: boolean } | null> {
    if (!r.chain_tx_id) {
      const use = await this.usedElsewhere(r);
      return use?.final ? this.finish(r.id, serve, use.tx_hash, null) : null;
    }
    const tx =
      (await this.d.broadcaster.process(r.chain_tx_id).catch(() => null)) ?? (await this.d.store.get<ChainTxDoc>(CHAIN_TXS, r.chain_tx_id));
    return tx ? this.settleFrom(r, tx, serve) : null;
  }

  private async usedElsewhere(r: RedemptionDoc): Promise<AuthorizationUse | null> {
    if (r.kind !== 'eip3009' || !r.authorization) return null;
    const c = (await this.d.store.get<ChallengeDoc>(CHALLENGES, r.id))!;
    return this.d.authorizationUse(c.network, c.asset, r.authorization);
  }

  /**
   * A final outbox row decides the redemption: confirmed settles it; failed fails it, unless the
   * authorization it carried was used by someone else's transaction that paid payTo (a front-run): then
   * that transaction settles it (once final), and our failed one's fee is booked all the same.
   */
  private async settleFrom(r: RedemptionDoc, tx: ChainTxDoc, serve: boolean): Promise<{ doc: RedemptionDoc; mine: boolean } | null> {
    const fee = { amount: BigInt(tx.fee_subunits ?? '0'), tx_hash: tx.tx_hash };
    if (tx.status === 'confirmed') return this.finish(r.id, serve, tx.tx_hash, fee);
    if (tx.status === 'failed') {
      const use = await this.usedElsewhere(r);
      if (use && use.tx_hash.toLowerCase() !== tx.tx_hash.toLowerCase())
        return use.final ? this.finish(r.id, serve, use.tx_hash, fee) : null;
      // a transaction that landed and reverted still burnt the gas wallet's fee: booked like a settled one's
      await this.fail(r.id, tx.failure_reason ?? 'failed on chain', tx.fee_subunits ? fee : null);
      throw new ProofError('settlement_failed', `the settlement failed on chain: ${tx.failure_reason ?? ''}`);
    }
    return null;
  }

  /**
   * Settled: consume the challenge, credit the merchant's wallet, book the network fee our transaction
   * paid (null: none of ours landed) and queue the `x402.settled` event, in one write. `mine`: this call
   * settled it (and served it when `serve`); otherwise it was settled before.
   */
  private async finish(
    challengeId: string,
    serve: boolean,
    txHash: string,
    fee: { amount: bigint; tx_hash: string } | null,
  ): Promise<{ doc: RedemptionDoc; mine: boolean }> {
    const { store } = this.d;
    return retryOnConflict(async () => {
      const r = (await store.get<RedemptionDoc>(REDEMPTIONS, challengeId))!;
      if (r.status !== 'settling') return { doc: r, mine: false };
      const c = (await store.get<ChallengeDoc>(CHALLENGES, challengeId))!;
      const now = this.d.now();
      const at = now.toISOString();
      const asset = `${c.chain}:${c.network}:${c.token}`;
      const b = new LedgerBatch(store, now);
      await b.transfer({
        id: `x402:${c.id}`,
        kind: 'deposit',
        asset,
        amount: c.amount_subunits,
        tx_hash: txHash,
        debit_account: accountId('sys:chain', asset),
        credit_account: walletAccount(c.wallet_id, asset),
      });
      if (fee) await bookSettlementCost(b, c, fee.amount, fee.tx_hash);
      const next: RedemptionDoc = { ...r, status: 'settled', served: serve, tx_hash: txHash, settled_at: at, next_check_at: null };
      const ops: WriteOp[] = [
        { op: 'cas', coll: REDEMPTIONS, doc: next, expected: r.version ?? 0 },
        { op: 'cas', coll: CHALLENGES, doc: { ...c, status: 'redeemed', redeemed_at: at }, expected: c.version ?? 0 },
        ...b.ops(),
        settledEventOp(c, next, now),
      ];
      await store.write(ops);
      return { doc: next, mine: true };
    });
  }

  /** Failed: nothing credited; the network fee a landed (reverted) transaction of ours paid is booked in the same write. */
  private async fail(challengeId: string, why: string, fee: { amount: bigint; tx_hash: string } | null): Promise<void> {
    await retryOnConflict(async () => {
      const r = await this.d.store.get<RedemptionDoc>(REDEMPTIONS, challengeId);
      if (!r || r.status !== 'settling') return;
      const b = new LedgerBatch(this.d.store, this.d.now());
      if (fee && fee.amount > 0n)
        await bookSettlementCost(b, { id: r.id, chain: r.chain as 'ethereum' | 'solana', network: r.network }, fee.amount, fee.tx_hash);
      await this.d.store.write([
        {
          op: 'cas',
          coll: REDEMPTIONS,
          doc: { ...r, status: 'failed', failure_reason: why, next_check_at: null },
          expected: r.version ?? 0,
        },
        ...b.ops(),
      ]);
    });
  }

  /** An agent wallet of this service paid through a spend attempt bound to the challenge. */
  private async redeemAgent(c: ChallengeDoc, p: Extract<Proof, { kind: 'agent_wallet' }>, proofHash: string): Promise<RedeemResult> {
    const { store } = this.d;
    let a = await store.get<SpendAttemptDoc>('spend_attempts', p.spend_attempt_id);
    if (!a || a.agent_wallet_id !== p.agent_wallet_id) throw new ProofError('unknown_challenge', 'no such spend attempt');
    if (a.status !== 'pending' || a.target_kind !== 'x402' || a.challenge_id !== c.id || a.reference !== c.id) {
      throw new ProofError('memo_mismatch', 'the spend attempt does not pay this challenge');
    }
    if (a.amount_subunits !== c.amount_subunits) throw new ProofError('wrong_amount', `the spend attempt must be of ${c.amount_subunits}`);
    if (a.chain !== c.chain || a.network !== c.network || a.token_symbol !== c.token)
      throw new ProofError('wrong_asset', 'the spend attempt is on another rail');
    if (a.target_wallet_id !== c.wallet_id) throw new ProofError('wrong_payee', 'the spend attempt pays another wallet');
    // paid in time is served even when presented after the challenge expired (the money has moved). A ledger
    // spend settled with its reservation, in one write: settled_at is its transfer's created_at. An older
    // attempt executed after its reservation settled later: settled in time, it was reserved in time too;
    // otherwise its transfer says when it was reserved.
    const settledAt = a.settlement?.status === 'settled' ? a.settlement.settled_at : null;
    if (!settledAt || settledAt >= c.expires_at) {
      const reserved = await store.get<Doc & { created_at: string }>(TRANSFERS, a.ledger_entry_id ?? '');
      if (!reserved || reserved.created_at >= c.expires_at)
        throw new ProofError('challenge_expired', 'the challenge expired before the spend attempt paid it');
    }
    const executed = a.settlement?.status === 'awaiting_execution';
    if (executed) a = await this.d.executeAttempt(a.id, a.agent_wallet_id);
    if (a.settlement?.status !== 'settled') throw new ProofError('settlement_failed', 'the spend attempt is not settled');
    // the spend holds the challenge's one payment, inserted in the write that recorded it pending and
    // settled (lib/agents/reserve.ts) and never removed: anything else paid it first. Read only for a spend
    // an older node executed apart from its decision.
    const paid = executed ? await store.get<Doc & { attempt_id: string | null }>(CHALLENGE_PAYMENTS, c.id) : { attempt_id: a.id };
    if (paid?.attempt_id !== a.id) throw new ProofError('already_redeemed', 'this challenge has already been paid');
    const now = this.d.now();
    const at = now.toISOString();
    const row: RedemptionDoc = {
      id: c.id,
      merchant_id: c.merchant_id,
      proof_key: replayKey.agent(a.id),
      proof_hash: proofHash,
      kind: 'agent_wallet',
      payer: a.agent_wallet_id,
      chain: c.chain,
      network: c.network,
      status: 'settled',
      served: true,
      chain_tx_id: null,
      tx_hash: null,
      spend_attempt_id: a.id,
      next_check_at: null,
      failure_reason: null,
      created_at: at,
      settled_at: at,
    };
    try {
      // consumes the challenge: the redemption's id is the challenge id, so a second insert is a duplicate.
      // The challenge row is left as issued (one row write less per paid request): GET …/challenges/{id}
      // shows it redeemed from its settled redemption
      await store.write([{ op: 'insert', coll: REDEMPTIONS, doc: row }]);
    } catch (e) {
      if (isDuplicate(e)) throw new ProofError('already_redeemed', 'this challenge has already been redeemed');
      throw e;
    }
    forgetChallenge(store, c.id);
    return this.result(c, row);
  }

  /** The scanner's step for a redemption still settling: move its settlement on, then settle or fail it. */
  async check(r: RedemptionDoc): Promise<void> {
    if (r.status !== 'settling') return;
    await this.progress(r, false).catch((e) => {
      if (!(e instanceof ProofError)) throw e;
    });
  }
}
