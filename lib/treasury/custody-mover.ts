/**
 * Custody moves on chain (lib/payouts/custody.ts): the tokens behind an internal transfer go from the
 * sending wallet's address to the receiving wallet's, on the top-up → move engine (./move-engine.ts).
 *
 * - The ledger already moved the balance; the move books only network costs, which are the platform's
 *   (./fee-policy.ts), so the receiving address gets exactly the amount and the sender's own ETH is
 *   untouched: on Ethereum (USDC and ETH alike) the gas wallet tops the sender's address up with exactly
 *   gas limit × gas price, parked there as the platform's (`sys:gas@<address>`, never the sender's
 *   balance), and the move, pinned to that gas, burns it; on Solana the gas wallet is the fee payer and
 *   also pays a new token account's rent (`fee:<tx>` and `rent:<tx>` from sys:gas).
 * - A move out of a wallet that itself received money by a still unconfirmed earlier move waits for it.
 * - While the gas wallet cannot pay, the move waits (`gas_wallet_empty`, logged), never fails silently.
 */
import { CUSTODY_MOVES, custodyInFlight, custodyRefs, type CustodyMoveDoc } from '../payouts/custody.ts';
import type { TxIntent } from '../chains/broadcast/types.ts';
import { SolanaTxDriver } from '../chains/solana/tx-driver.ts';
import { solRentRefusal } from '../chains/solana/rent.ts';
import { gasWalletRef } from './gas-wallet.ts';
import type { KeyRef } from '../chains/keys.ts';
import { TopupMoveEngine, type MoveEngineDeps } from './move-engine.ts';

export type CustodyMoverDeps = MoveEngineDeps;

type EthIntent = Extract<TxIntent, { chain: 'ethereum' }>;

export class CustodyMover extends TopupMoveEngine<CustodyMoveDoc, CustodyMoverDeps> {
  constructor(d: CustodyMoverDeps) {
    super(d, {
      name: 'custody-moves',
      coll: CUSTODY_MOVES,
      topupPurpose: 'custody_topup',
      movePurpose: 'custody',
      noun: 'custody move',
      movement: 'custody_move',
    });
  }

  protected txId(m: CustodyMoveDoc, stage: 'topup' | 'move'): string {
    return `${m.id}:${stage}:${m.attempt}`;
  }

  private from(m: CustodyMoveDoc): KeyRef {
    return { role: 'wallet', chain: m.chain, index: m.from_index };
  }

  private ethIntent(m: CustodyMoveDoc): EthIntent {
    const from = this.from(m);
    return m.token === 'ETH'
      ? { chain: 'ethereum', kind: 'native', from, to: m.to_address, value: m.amount_subunits }
      : {
          chain: 'ethereum',
          kind: 'erc20',
          from,
          token: this.d.config.chains.ethereum[m.network].usdcToken,
          to: m.to_address,
          amount: m.amount_subunits,
        };
  }

  protected async onWaiting(m: CustodyMoveDoc): Promise<void> {
    const driver = this.d.driver(m.chain, m.network);
    if (!driver) return this.wait(m, `no RPC configured for ${m.chain} ${m.network}`);
    if (m.chain === 'ethereum' && this.toppedUp(m)) return this.move(m, this.pinned(m, this.ethIntent(m)), m.from_address);
    if ((await custodyInFlight(this.d.store, m.from_wallet_id, m.created_at, m.id)).length) {
      return this.wait(m, 'custody_move_pending', this.d.pollIntervalMs);
    }
    // the platform pays the move's gas: a top-up of exactly that to the sender, then the move pinned to it
    if (m.chain === 'ethereum') return this.topupThenMove(m, this.ethIntent(m), m.from_address);
    if (m.token === 'SOL' && driver instanceof SolanaTxDriver) {
      // the chain would refuse it until the sender's balance changes: wait (logged) rather than burn attempts
      const refusal = await solRentRefusal(driver, m.from_address, m.to_address, BigInt(m.amount_subunits), 'custody move');
      if (refusal) return this.wait(m, refusal);
    }
    if (!(await this.solanaGasCovers(m))) return this.wait(m, 'gas_wallet_empty');
    return this.move(m, this.solanaIntent(m));
  }

  private solanaIntent(m: CustodyMoveDoc): TxIntent {
    const fee_payer = gasWalletRef(m.chain, m.network);
    if (m.token === 'SOL')
      return { chain: 'solana', kind: 'native', from: this.from(m), to: m.to_address, lamports: m.amount_subunits, fee_payer };
    const decimals = this.d.config.rails.find((r) => r.chain === 'solana' && r.network === m.network && r.token === m.token)?.decimals ?? 6;
    const mint = this.d.config.chains.solana[m.network].usdcToken;
    return { chain: 'solana', kind: 'spl', from: this.from(m), mint, decimals, to: m.to_address, amount: m.amount_subunits, fee_payer };
  }

  protected payer(m: CustodyMoveDoc): string {
    return m.from_address;
  }

  protected refs(m: CustodyMoveDoc) {
    return custodyRefs(m);
  }
}
