/**
 * Two nodes over one store (a PostgreSQL database, one DATA_DIR), both running the money-out scanners at once: the
 * deposit is swept once, and every payout is carried out by exactly one of them, with exactly one
 * transaction each on chain (the wallet's nonce moves once per payout).
 */
import { Wallet } from 'ethers';
import { startHardhatNode, type HardhatNode } from '../harness/hardhat-node.ts';
import { CapturingMailer, startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, until } from '../integration/chain-listener-helpers.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';
import { rmSync } from 'node:fs';

jest.setTimeout(240_000);

describe('two nodes sharing the money-out work', () => {
  let chain: HardhatNode;
  const nodes: TestNode[] = [];
  const dataDir = tempDir();
  let db: TestDatabase;

  beforeAll(async () => {
    chain = await startHardhatNode();
    db = await freshDatabase('payouts_two_nodes');
  }, 120_000);
  afterAll(async () => {
    for (const n of nodes) await n.stop();
    await chain?.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sweeps once and sends every payout exactly once', async () => {
    const env = {
      DATA_DIR: dataDir,
      STORE_URL: db.url,
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: '100',
      BROADCAST_POLL_INTERVAL_MS: '50',
    };
    // one mailer for both: either node's mail outbox may deliver the verification code (the other's scanner
    // can claim the row before the writing node's own nudge sends it)
    const mailer = new CapturingMailer();
    const a = await startTestNode(env, { mailer });
    nodes.push(a);
    const b = await startTestNode(env, { mailer });
    nodes.push(b);
    const m = await merchant(a);
    const s = await createSession(a, m, RAILS.eth, 0.5);
    await chain.sendEth(1, s.address, 5n * 10n ** 17n);
    const wallet = await until(
      'the ETH to be swept and available',
      async () => {
        const w = (await b.request('GET', '/v1/wallets', { key: m.apiKey })).body.data?.[0];
        const x = w?.balances.find((y: any) => y.token === 'ETH');
        return x && x.pending_subunits === '0' && x.available_subunits !== '0' ? w : null;
      },
      90_000,
    );
    expect(await a.node.rt.store.count('sweeps', {})).toBe(1);

    const dests = Array.from({ length: 8 }, () => Wallet.createRandom().address);
    const ids: string[] = [];
    for (const [i, destination] of dests.entries()) {
      const r = await (i % 2 ? b : a).request('POST', '/v1/payouts', {
        key: m.apiKey,
        body: { wallet_id: wallet.id, amount_subunits: String(10n ** 16n + BigInt(i)), token: 'ETH', destination },
      });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    await until(
      'every payout to complete',
      async () => {
        const all = await Promise.all(ids.map((id) => a.request('GET', `/v1/payouts/${id}`, { key: m.apiKey })));
        return all.every((r) => r.body.status === 'completed');
      },
      120_000,
    );
    for (const [i, d] of dests.entries()) expect(await chain.provider.getBalance(d)).toBe(10n ** 16n + BigInt(i));
    expect(await chain.provider.getTransactionCount(wallet.address)).toBe(8);
    const rows = await a.node.rt.store.find<ChainTxDoc>(CHAIN_TXS, { purpose: 'payout' });
    expect(rows).toHaveLength(8);
    expect(rows.map((r) => r.nonce).sort((x, y) => x! - y!)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const w = (await a.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body;
    expect(BigInt(w.balances.find((x: any) => x.token === 'ETH').available_subunits)).toBe(await chain.provider.getBalance(wallet.address));
  });
});
