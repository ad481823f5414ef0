/**
 * The Ethereum listener against a real local chain (Hardhat's node) with TestUSDC deployed from
 * contracts/TestUSDC.sol: sessions created over HTTP are paid with ethers from funded accounts and move by
 * themselves (exact, two parts, over, ETH), webhooks arrive signed, a second ERC-20 never moves a session
 * and is an orphan for operators, a reorg takes a counted deposit back, a payment after expiry is
 * recorded as late. A session that becomes visible only after the listener passed the block that paid
 * it (USDC and ETH) is backfilled and credited once; a backfill over already credited deposits (after a
 * lease take-over) counts nothing twice.
 */
import { Transaction, Wallet } from 'ethers';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import {
  RAILS,
  acknowledgedDepositsOf,
  createSession,
  depositsOf,
  getSession,
  holdNextSessionCommit,
  sessionWhen,
  until,
  webhooksOf,
} from './chain-listener-helpers.ts';

jest.setTimeout(180_000);

describe('Ethereum listener on a local Hardhat chain', () => {
  let chain: HardhatNode;
  let usdc: TestUsdc;
  let other: TestUsdc;
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);

  beforeAll(async () => {
    chain = await startHardhatNode();
    usdc = await chain.deployTestUsdc();
    other = await chain.deployTestUsdc(); // another ERC-20 with the same symbol: not the configured contract
    for (const i of [1, 2, 3, 4]) await usdc.mint(chain.accounts[i]!.address, 1_000_000_000n);
    await other.mint(chain.accounts[5]!.address, 1_000_000_000n);
    rx = await startReceiver();
    t = await startTestNode(
      {
        ETHEREUM_TESTNET_RPC_URL: chain.url,
        ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
        ETHEREUM_TESTNET_CONFIRMATIONS: '1',
        CHAIN_POLL_INTERVAL_MS: '100',
        WEBHOOK_SCAN_INTERVAL_MS: '100',
        SESSION_SCAN_INTERVAL_MS: '100',
      },
      { now },
    );
    m = await merchant(t, { webhook_url: rx.url });
  });

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await chain?.stop();
  });

  it('an exact USDC payment completes the session, with a verified webhook and the paying tx on the session', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 12.5);
    expect(s.status).toBe('pending');
    const { receipt } = await usdc.transfer(1, s.address, 12_500_000n);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(12.5);
    expect(done.completed_at).toEqual(expect.any(String));
    expect(done.deposits).toEqual([
      expect.objectContaining({
        tx_hash: receipt!.hash,
        index: 0,
        amount: 12.5,
        amount_subunits: '12500000',
        token: 'USDC',
        confirmations: expect.any(Number),
        late: false,
        counted: true,
        reverted: false,
        simulated: false,
      }),
    ]);
    expect(done.deposits[0].confirmations).toBeGreaterThanOrEqual(1);
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(receipt!.hash);

    const [hook] = await until('the completed webhook', () => webhooksOf(rx, s.session_id).length > 0 && webhooksOf(rx, s.session_id));
    expect(hook!.headers['x-service-event']).toBe('payment_session.completed');
    expect(verifyWebhook(hook!.raw, String(hook!.headers['x-service-signature']), m.webhookSecret)).toBe(true);
    expect(JSON.parse(hook!.raw)).toEqual(
      expect.objectContaining({
        event_type: 'payment_session.completed',
        session_id: s.session_id,
        status: 'completed',
        amount: 12.5,
        currency: 'USDC',
        chain: 'ethereum',
        network: 'testnet',
      }),
    );

    // stored first, then credited: the deposit record names the session and the block
    const [dep] = await acknowledgedDepositsOf(t, s.session_id);
    expect(dep).toEqual(
      expect.objectContaining({
        id: `ethereum:testnet:${receipt!.hash}:0`,
        status: 'credited',
        delivered: true,
        session_id: s.session_id,
        token: 'USDC',
        amount_subunits: '12500000',
        block_number: receipt!.blockNumber,
        block_hash: receipt!.blockHash,
        to_address: s.address,
      }),
    );

    // confirmations keep counting after the credit: the session shows today's depth
    await chain.mine(5);
    const deeper = await sessionWhen(
      t,
      m,
      s.session_id,
      'five more confirmations',
      (x) => x.deposits[0].confirmations >= done.deposits[0].confirmations + 5,
    );
    expect(deeper.deposits[0].confirmations).toBe((await chain.blockNumber()) - receipt!.blockNumber + 1);
  });

  it('two parts: partial_paid, then completed, with a webhook for each', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(2, s.address, 4_000_000n);
    const partial = await sessionWhen(t, m, s.session_id, 'partial payment', (x) => x.status === 'partial_paid');
    expect(partial.received_amount).toBe(4);
    await until('the partial_paid webhook', () =>
      webhooksOf(rx, s.session_id).some((r) => r.headers['x-service-event'] === 'payment_session.partial_paid'),
    );
    const { receipt } = await usdc.transfer(2, s.address, 6_000_000n);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(10);
    expect(done.deposits.map((d: any) => d.amount)).toEqual([4, 6]);
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(receipt!.hash);
    const hooks = await until('both webhooks', () => webhooksOf(rx, s.session_id).length >= 2 && webhooksOf(rx, s.session_id));
    expect(hooks.map((r) => r.headers['x-service-event'])).toEqual(['payment_session.partial_paid', 'payment_session.completed']);
  });

  it('an overpayment completes the session and stays visible', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 5);
    await usdc.transfer(3, s.address, 7_500_000n);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.expected_amount).toBe(5);
    expect(done.received_amount).toBe(7.5);
    expect(done.received_amount_subunits).toBe('7500000');
  });

  it('several Transfer logs of one transaction are separate deposits (tx, log index)', async () => {
    const a = await createSession(t, m, RAILS.ethUsdc, 1);
    const b = await createSession(t, m, RAILS.ethUsdc, 2);
    const { receipt } = await usdc.transferBatch(4, [a.address, b.address, a.address], [600_000n, 2_000_000n, 400_000n]);
    const doneA = await sessionWhen(t, m, a.session_id, 'a completed', (x) => x.status === 'completed');
    const doneB = await sessionWhen(t, m, b.session_id, 'b completed', (x) => x.status === 'completed');
    expect(doneA.deposits.map((d: any) => [d.tx_hash, d.index, d.amount])).toEqual([
      [receipt!.hash, 0, 0.6],
      [receipt!.hash, 2, 0.4],
    ]);
    expect(doneB.deposits.map((d: any) => [d.tx_hash, d.index, d.amount])).toEqual([[receipt!.hash, 1, 2]]);
  });

  it('ETH: a plain transfer pays an ETH session', async () => {
    const s = await createSession(t, m, RAILS.eth, 0.25);
    const { receipt } = await chain.sendEth(2, s.address, 250_000_000_000_000_000n);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(0.25);
    expect(done.deposits).toEqual([
      expect.objectContaining({ tx_hash: receipt!.hash, index: -1, token: 'ETH', amount_subunits: '250000000000000000', counted: true }),
    ]);
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(receipt!.hash);
  });

  it('another ERC-20, or ETH sent to a USDC session, never moves it and is an orphan operators see', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 5);
    const wrongToken = await other.transfer(5, s.address, 5_000_000n);
    const wrongAsset = await chain.sendEth(5, s.address, 10n ** 18n);
    const orphans = await until('both orphans', async () => {
      const list = (await t.call<{ deposits: any[] }>('operators.listDeposits', { orphans: true, session_id: s.session_id })).deposits;
      return list.length === 2 && list;
    });
    expect(orphans.map((d) => [d.tx_hash, d.orphan_reason, d.token, d.token_contract]).sort()).toEqual(
      [
        [wrongAsset.hash, 'wrong_token', 'ETH', null],
        [wrongToken.hash, 'wrong_token', null, other.address],
      ].sort(),
    );
    expect(orphans.every((d) => d.status === 'orphan' && d.delivered === true)).toBe(true);
    // the listener is past those blocks, and the session did not move
    const after = await getSession(t, m, s.session_id);
    expect(after.status).toBe('pending');
    expect(after.received_amount).toBe(0);
    expect(after.deposits).toEqual([]);
    expect(webhooksOf(rx, s.session_id)).toEqual([]);
    // the operator listing of all orphans shows them too
    const all = (await t.call<{ deposits: any[] }>('operators.listDeposits', { status: 'orphan' })).deposits;
    expect(all.map((d) => d.tx_hash)).toEqual(expect.arrayContaining([wrongToken.hash, wrongAsset.hash]));
  });

  it('dust (less than a tenth of the rail minimum) never moves a session and is an orphan', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 1);
    const dust = await usdc.transfer(1, s.address, 999n); // 0.000999 USDC; the minimum is 0.01
    const [orphan] = await until('the dust orphan', async () => {
      const list = (await t.call<{ deposits: any[] }>('operators.listDeposits', { orphans: true, session_id: s.session_id })).deposits;
      return list.length === 1 && list;
    });
    expect(orphan).toMatchObject({ tx_hash: dust.hash, orphan_reason: 'dust', amount_subunits: '999', status: 'orphan' });
    const { receipt } = await usdc.transfer(1, s.address, 1_000_000n);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.deposits.map((d: any) => d.tx_hash)).toEqual([receipt!.hash]);
    expect(done.received_amount).toBe(1);
  });

  it('a reorg takes a counted deposit back; the same transaction mined again on the new branch counts again', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 8);
    const snap = await chain.snapshot();
    const { receipt } = await usdc.transfer(1, s.address, 8_000_000n);
    const raw = Transaction.from((await chain.provider.getTransaction(receipt!.hash))!).serialized;
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    await until('the completed webhook', () => webhooksOf(rx, s.session_id).length === 1);
    // the block with the payment leaves the chain; other blocks take its place
    expect(await chain.revert(snap)).toBe(true);
    await chain.sendEth(6, Wallet.createRandom().address, 1n);
    await chain.mine(2);
    const back = await sessionWhen(t, m, s.session_id, 'the revert', (x) => x.status === 'pending');
    expect(back.received_amount).toBe(0);
    expect(back.completed_at).toBeUndefined();
    expect(back.deposits).toEqual([expect.objectContaining({ tx_hash: receipt!.hash, reverted: true, counted: true })]);
    expect(back.explorer_url).toBeUndefined(); // a local chain: no public explorer
    const [dep] = await acknowledgedDepositsOf(t, s.session_id);
    expect(dep).toEqual(expect.objectContaining({ status: 'reverted', reverted_at: expect.any(String), delivered: true }));

    // the same signed transaction is broadcast again and lands in a block of the new branch
    const hash = await chain.rpc<string>('eth_sendRawTransaction', [raw]);
    expect(hash).toBe(receipt!.hash);
    const mined = await until('the new receipt', () => chain.receipt(hash));
    expect(mined.blockHash).not.toBe(receipt!.blockHash);
    const done = await sessionWhen(t, m, s.session_id, 'completion again', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(8);
    expect(done.deposits).toEqual([expect.objectContaining({ tx_hash: hash, reverted: false, counted: true })]);
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(hash);
    // the inbox records the acknowledgement just after the session's commit: wait for it
    const again = await until('the inbox to record the credit', async () => {
      const [d] = await depositsOf(t, s.session_id);
      return d?.status === 'credited' ? d : null;
    });
    expect(again).toEqual(expect.objectContaining({ status: 'credited', block_hash: mined.blockHash, block_number: mined.blockNumber }));
    // completed is told once: the merchant already fulfilled on the first event, and a second event id
    // would make a merchant who deduplicates on it fulfil twice
    const rows = await t.node.rt.store.find<{ id: string; event_type: string }>('webhook_events', { session_id: s.session_id });
    expect(rows.map((r) => r.event_type)).toEqual(['payment_session.completed']);
    await new Promise((r) => setTimeout(r, 500));
    expect(webhooksOf(rx, s.session_id).map((r) => r.headers['x-service-event'])).toEqual(['payment_session.completed']);
  });

  const listener = async () => (await t.call<Record<string, any>>('ethereum-listener.status')).testnet;
  /** waits until the listener's cursor is at or past `block`, then for two more passes */
  const passedBlock = async (block: number) => {
    const st = await until(`the cursor past block ${block}`, async () => {
      const x = await listener();
      return x.last_stats?.cursor >= block && x;
    });
    await until('two more passes', async () => (await listener()).passes >= st.passes + 2);
  };
  const backfilled = new Map<string, { hash: string; block: number }>();

  it('late commit, USDC: a session written after the listener passed its payment block is backfilled, credited once, completed with a webhook', async () => {
    const held = holdNextSessionCommit(t);
    const creating = createSession(t, m, RAILS.ethUsdc, 6);
    const doc = await held.session;
    const { receipt } = await usdc.transfer(2, doc.address, 6_000_000n);
    const block = (await chain.provider.getBlock(receipt!.blockNumber))!;
    expect(Date.parse(doc.created_at)).toBeLessThanOrEqual(block.timestamp * 1000 + 1000);
    await passedBlock(receipt!.blockNumber);
    // the scan went past the payment without knowing the address
    expect(await depositsOf(t, doc.id)).toEqual([]);

    held.release();
    const s = await creating;
    expect(s.session_id).toBe(doc.id);
    const done = await sessionWhen(t, m, s.session_id, 'completion by the backfill', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(6);
    expect(done.deposits).toEqual([
      expect.objectContaining({ tx_hash: receipt!.hash, index: 0, amount: 6, token: 'USDC', late: false, counted: true }),
    ]);
    const [hook] = await until('the completed webhook', () => webhooksOf(rx, s.session_id).length > 0 && webhooksOf(rx, s.session_id));
    expect(hook!.headers['x-service-event']).toBe('payment_session.completed');
    expect(verifyWebhook(hook!.raw, String(hook!.headers['x-service-signature']), m.webhookSecret)).toBe(true);
    // once: one stored deposit, one webhook, also after more passes
    await passedBlock(await chain.blockNumber());
    expect(await depositsOf(t, s.session_id)).toEqual([
      expect.objectContaining({
        id: `ethereum:testnet:${receipt!.hash}:0`,
        status: 'credited',
        block_number: receipt!.blockNumber,
        session_id: s.session_id,
      }),
    ]);
    expect((await getSession(t, m, s.session_id)).deposits).toHaveLength(1);
    expect(webhooksOf(rx, s.session_id)).toHaveLength(1);
    backfilled.set(s.session_id, { hash: receipt!.hash, block: receipt!.blockNumber });
  });

  it('late commit, ETH: a plain transfer the listener passed before the session was visible is backfilled and completes it', async () => {
    const held = holdNextSessionCommit(t);
    const creating = createSession(t, m, RAILS.eth, 0.5);
    const doc = await held.session;
    const { receipt } = await chain.sendEth(3, doc.address, 500_000_000_000_000_000n);
    await chain.mine(3); // the payment is not even in the newest blocks any more
    await passedBlock(receipt!.blockNumber + 3);
    expect(await depositsOf(t, doc.id)).toEqual([]);

    held.release();
    const s = await creating;
    const done = await sessionWhen(t, m, s.session_id, 'completion by the backfill', (x) => x.status === 'completed');
    expect(done.received_amount).toBe(0.5);
    expect(done.deposits).toEqual([
      expect.objectContaining({ tx_hash: receipt!.hash, index: -1, token: 'ETH', amount_subunits: '500000000000000000', counted: true }),
    ]);
    await until('the completed webhook', () => webhooksOf(rx, s.session_id).length === 1);
    await passedBlock(await chain.blockNumber());
    expect(await depositsOf(t, s.session_id)).toEqual([
      expect.objectContaining({ status: 'credited', index: -1, block_number: receipt!.blockNumber }),
    ]);
    expect(webhooksOf(rx, s.session_id)).toHaveLength(1);
    backfilled.set(s.session_id, { hash: receipt!.hash, block: receipt!.blockNumber });
  });

  it('a backfill over already credited deposits (all addresses, after a lease take-over) counts nothing twice', async () => {
    expect(backfilled.size).toBe(2);
    // a partially paid session whose deposit the scan found normally
    const p = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(4, p.address, 4_000_000n);
    await sessionWhen(t, m, p.session_id, 'partial payment', (x) => x.status === 'partial_paid');
    // the listener marks its deposit credited in a write of its own after the session's: the snapshot below
    // is of credited deposits only
    await until('the partial deposit credited', async () => (await depositsOf(t, p.session_id)).every((d) => d.status === 'credited'));
    const ids = [...backfilled.keys(), p.session_id];
    const before = await Promise.all(
      ids.map(async (id) => ({ deposits: await depositsOf(t, id), session: await getSession(t, m, id), hooks: webhooksOf(rx, id).length })),
    );
    const runs = (await listener()).last_stats.backfills as { runs: number; deposits: number };

    // another node holds the lease for a moment; when this one takes it back it backfills every address
    await until('the lease taken by another node', async () => {
      const lease = await t.node.rt.store.get<any>('listener_leases', 'ethereum:testnet');
      try {
        await t.node.rt.store.write([
          {
            op: 'cas',
            coll: 'listener_leases',
            doc: { ...lease, owner: 'another-node', expires_at: new Date(Date.now() + 1500).toISOString() },
            expected: lease.version,
          },
        ]);
        return true;
      } catch {
        return false;
      }
    });
    await until('the lease back and a backfill', async () => {
      const x = await listener();
      return x.holding && x.last_stats.backfills.runs > runs.runs;
    });
    const after = (await listener()).last_stats.backfills;
    // it found the credited deposits again: the three above at least
    expect(after.deposits - runs.deposits).toBeGreaterThanOrEqual(3);
    await passedBlock(await chain.blockNumber());

    for (const [i, id] of ids.entries()) {
      const deposits = await depositsOf(t, id);
      expect(deposits).toEqual(before[i]!.deposits); // not one field written again
      const s = await getSession(t, m, id);
      expect(s.received_amount).toBe(before[i]!.session.received_amount);
      // the view shows current confirmations (they grow with the chain): compare everything else
      const settled = (ds: Array<Record<string, unknown>>) => ds.map(({ confirmations: _c, ...rest }) => rest);
      expect(settled(s.deposits)).toEqual(settled(before[i]!.session.deposits));
      expect(webhooksOf(rx, id)).toHaveLength(before[i]!.hooks);
    }
    // the partial session still completes normally
    await usdc.transfer(4, p.address, 6_000_000n);
    const done = await sessionWhen(t, m, p.session_id, 'completion', (x) => x.status === 'completed');
    expect(done.deposits.map((d: any) => d.amount)).toEqual([4, 6]);
  });

  it('the listener exposes its state to operators', async () => {
    const status = await t.call<Record<string, any>>('ethereum-listener.status');
    expect(status.testnet).toEqual(expect.objectContaining({ holding: true, last_error: null }));
    expect(status.testnet.passes).toBeGreaterThan(0);
    expect(status.testnet.last_stats.cursor).toBeGreaterThanOrEqual((await chain.blockNumber()) - 5);
    expect(await t.call('solana-listener.status')).toEqual({});
  });

  // last: it moves the node's clock two hours ahead
  it('a payment after expiry is recorded as late and the session stays expired', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 3);
    offset += 2 * 3_600_000;
    await sessionWhen(t, m, s.session_id, 'expiry', (x) => x.status === 'expired');
    const { receipt } = await usdc.transfer(3, s.address, 3_000_000n);
    const late = await sessionWhen(t, m, s.session_id, 'the late deposit', (x) => x.deposits.length === 1);
    expect(late.status).toBe('expired');
    expect(late.deposits[0]).toEqual(expect.objectContaining({ tx_hash: receipt!.hash, late: true, counted: true, amount: 3 }));
    expect(late.received_amount).toBe(3);
    const [dep] = await acknowledgedDepositsOf(t, s.session_id);
    expect(dep).toEqual(expect.objectContaining({ status: 'credited', credit_result: 'late' }));
  });
});
