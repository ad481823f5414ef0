/**
 * A destination token account closed between a payout's quote and its transaction (issue 18 acceptance
 * review), over HTTP against a started node on the LiteSVM harness. The quote found the destination's
 * USDC account and reserved no rent; the merchant (who owns the destination) closes it while the payout
 * waits for a custody move into its wallet. The payout must not create the account again at the wallet's
 * expense beyond what was reserved: it fails before anything is sent, saying why, its reservation
 * released; paid out again, the new quote includes the rent and it completes, charged exactly that.
 */
import { address } from '@solana/kit';
import { getCloseAccountInstruction } from '@solana-program/token';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { custodyIdle, getOk, payoutFinal, payoutOk } from '../helpers/merchant-money.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { fundSolanaWallet, startSolanaMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { until } from '../integration/chain-listener-helpers.ts';
import { createWallet } from '../integration/agents-helpers.ts';
import type { ReconcileReport } from '../../lib/treasury/reconcile/run.ts';

jest.setTimeout(300_000);
const RENT = 2_039_280n;

describe('a destination token account closed after the quote', () => {
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let m: RegisteredMerchant;
  let w: any;
  let stop: () => Promise<unknown>;

  beforeAll(async () => {
    ({ sol, mint, t, stop } = await startSolanaMoneyNode());
    m = await merchant(t);
    expect((await deep()).ok).toBe(true);
    w = await fundSolanaWallet(t, sol, mint, m, { usdc: 5, sol: 1 });
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  const deep = () => t.call<ReconcileReport>('treasury.reconcile', { deep: true });
  const get = (path: string) => getOk(t, m, path);
  const bal = (x: any, token: string) => BigInt(x.balances.find((b: any) => b.token === token)?.available_subunits ?? '0');
  const pay = (body: Record<string, unknown>) => payoutOk(t, m, body);
  const final = (id: string) => payoutFinal(t, m, id);

  it('fails before anything is sent, its reservation released; paid out again it completes, charged the rent', async () => {
    // a second wallet holding a little SOL, whose move back into the main wallet must wait (it would
    // leave the sender below the rent-exempt minimum): payouts from the main wallet wait behind it
    const x = await createWallet(t, m, 'merchant', 'solana');
    await pay({ wallet_id: w.id, amount_subunits: '1000000', token: 'SOL', destination: x.address });
    await custodyIdle(t);
    expect(sol.balance(x.address)).toBe(1_000_000n);
    await pay({ wallet_id: x.id, amount_subunits: '500000', token: 'SOL', destination: w.address });

    // the merchant's own destination, with its USDC account: the quote reserves no rent
    const dest = await sol.newWallet(100_000_000n);
    await sol.createAssociatedTokenAccount(dest.address, mint.mint);
    const solBefore = bal(await get(`/v1/wallets/${w.id}`), 'SOL');
    const p = await pay({ wallet_id: w.id, amount_subunits: '1000000', token: 'USDC', destination: dest.address });
    expect(p.fee_subunits).toBe('5000');
    await until(
      'the payout to wait for the custody move',
      async () => (await get(`/v1/payouts/${p.id}`)).waiting_reason === 'custody_move_pending',
    );

    // closed behind the quote's back, then the custody move may go (the sender gets more SOL from outside)
    const ata = await sol.associatedTokenAddress(dest.address, mint.mint);
    await sol.sendInstructions(dest, [getCloseAccountInstruction({ account: address(ata), destination: dest.address, owner: dest })]);
    expect(sol.balance(ata)).toBe(0n);
    await sol.transferSol(dest, x.address, 1_000_000n);

    const failed = await final(p.id);
    expect(failed.status).toBe('failed');
    expect(failed.failure_reason).toMatch(/token account was closed after the payout was quoted/);
    expect(failed.fee_subunits).toBe('0');
    expect(failed.tx_hash).toBeNull();
    // nothing was sent: no account created at the wallet's expense, its SOL and USDC available again
    expect(sol.balance(ata)).toBe(0n);
    const after = await get(`/v1/wallets/${w.id}`);
    expect(bal(after, 'USDC')).toBe(5_000_000n);
    expect(bal(after, 'SOL')).toBe(solBefore);

    // paid out again: the new quote includes the rent, and that is what it is charged
    const again = await pay({ wallet_id: w.id, amount_subunits: '1000000', token: 'USDC', destination: dest.address });
    expect(BigInt(again.fee_subunits)).toBe(5_000n + RENT);
    const done = await final(again.id);
    expect(done.status).toBe('completed');
    expect(BigInt(done.fee_subunits)).toBe(5_000n + RENT);
    expect(await sol.tokenBalance(dest.address, mint.mint)).toBe(1_000_000n);
    const end = await get(`/v1/wallets/${w.id}`);
    expect(bal(end, 'SOL')).toBe(solBefore - 5_000n - RENT);
    expect(sol.balance(w.address)).toBe(bal(end, 'SOL'));
    // the only drift: the SOL sent to the second wallet from outside (money the books never counted)
    const r = await deep();
    expect(r.drifts.map((d) => [d.code, d.address, d.difference])).toEqual([['balance', x.address, '1000000']]);
  });
});
