/**
 * Issue 18, leak 1 (Solana: two equal movements became one), over HTTP against a started node on the
 * LiteSVM harness. Equal payouts (same wallet, destination, token and amount) requested at once used to
 * build byte-identical transactions within one blockhash: one signature, one transfer on chain, every
 * row `completed` and every row charged. Each outbox row's transaction now carries a memo with the row's
 * id, and "already processed" counts only for the row's own signature: N equal movements are N transfers
 * with N distinct signatures, and the recipient gets N times the amount.
 */
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { fundSolanaWallet, startSolanaMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { until } from '../integration/chain-listener-helpers.ts';
import { createWallet } from '../integration/agents-helpers.ts';
import { getOk } from '../helpers/merchant-money.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { MEMO_PROGRAM_ID } from '../../lib/chains/solana/tx-driver.ts';

jest.setTimeout(240_000);

describe('equal Solana movements stay distinct', () => {
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let m: RegisteredMerchant;
  let w: any;
  let stop: () => Promise<unknown>;

  beforeAll(async () => {
    ({ sol, mint, t, stop } = await startSolanaMoneyNode());
    m = await merchant(t);
    w = await fundSolanaWallet(t, sol, mint, m, { usdc: 20, sol: 1 });
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  const get = (path: string) => getOk(t, m, path);
  const bal = (x: any, token: string) => x.balances.find((b: any) => b.token === token);
  const payAll = async (n: number, body: Record<string, unknown>) => {
    const rs = await Promise.all(Array.from({ length: n }, () => t.request('POST', '/v1/payouts', { key: m.apiKey, body })));
    for (const r of rs) if (r.status !== 201) throw new Error(`payout refused: ${r.status} ${r.text}`);
    return rs.map((r) => r.body);
  };
  const final = (ids: string[]) =>
    until(
      'the payouts to be final',
      async () => {
        const ps = await Promise.all(ids.map((id) => get(`/v1/payouts/${id}`)));
        return ps.every((p) => p.status === 'completed' || p.status === 'failed') ? ps : null;
      },
      120_000,
    );
  const reconcile = () => t.call('treasury.reconcile') as Promise<{ differences: unknown[] }>;

  it('three equal USDC payouts: three transfers, three signatures, three times the amount', async () => {
    const dest = (await sol.newWallet(0n)).address;
    const ps = await final(
      (await payAll(3, { wallet_id: w.id, amount_subunits: '1000000', token: 'USDC', destination: dest })).map((p) => p.id),
    );
    expect(ps.map((p) => p.status)).toEqual(['completed', 'completed', 'completed']);
    expect(new Set(ps.map((p) => p.tx_hash)).size).toBe(3);
    expect(await sol.tokenBalance(dest, mint.mint)).toBe(3_000_000n);
    // each row charged its own transaction's fee; one of them the new token account's rent
    const charged = ps.map((p) => BigInt(p.fee_subunits)).sort((a, b) => (a < b ? -1 : 1));
    expect(charged).toEqual([5_000n, 5_000n, 5_000n + 2_039_280n]);
    expect((await reconcile()).differences).toEqual([]);
  });

  it('three equal SOL payouts: three transfers, three signatures, three times the amount', async () => {
    const dest = (await sol.newWallet(0n)).address;
    const ps = await final(
      (await payAll(3, { wallet_id: w.id, amount_subunits: '50000000', token: 'SOL', destination: dest })).map((p) => p.id),
    );
    expect(ps.map((p) => p.status)).toEqual(['completed', 'completed', 'completed']);
    expect(new Set(ps.map((p) => p.tx_hash)).size).toBe(3);
    expect(sol.balance(dest)).toBe(150_000_000n);
    expect(ps.map((p) => p.fee_subunits)).toEqual(['5000', '5000', '5000']);
    expect((await reconcile()).differences).toEqual([]);
  });

  it('three equal internal transfers of 2 USDC: the agent address receives 6 USDC by three custody moves', async () => {
    const agent = await createWallet(t, m, 'agent', 'solana', 'testnet');
    const ps = await payAll(3, { wallet_id: w.id, amount_subunits: '2000000', token: 'USDC', destination: agent.address });
    expect(ps.map((p) => [p.execution, p.status])).toEqual([
      ['ledger', 'completed'],
      ['ledger', 'completed'],
      ['ledger', 'completed'],
    ]);
    expect(bal(await get(`/v1/wallets/${agent.id}`), 'USDC').available_subunits).toBe('6000000');
    await until(
      'the custody moves to complete',
      async () => {
        const s = await t.call('money-out.status');
        return s.custody_moves.completed >= 3 && s.custody_moves.waiting + s.custody_moves.topup + s.custody_moves.moving === 0 ? s : null;
      },
      120_000,
    );
    expect(await sol.tokenBalance(agent.address, mint.mint)).toBe(6_000_000n);
    // three transactions into the agent, each findable on chain by the memo naming its outbox row
    const moves = sol.transactions().filter((x) => !x.meta.err && x.accountKeys.includes(agent.address));
    expect(new Set(moves.map((x) => x.signature)).size).toBe(3);
    const memos = moves.map((x) => {
      const ix = x.instructions.find((i) => x.accountKeys[i.programIdIndex] === MEMO_PROGRAM_ID);
      return ix ? Buffer.from(ix.data).toString('utf8') : null;
    });
    expect(new Set(memos).size).toBe(3);
    for (const memo of memos) expect(memo).toMatch(/^custody:po_\w+:move:0$/);
    expect((await reconcile()).differences).toEqual([]);
  });
});
