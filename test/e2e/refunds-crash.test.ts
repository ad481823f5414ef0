/**
 * Refunds survive a node killed at any point (real child processes, `node index.ts`, SIGKILL, one
 * DATA_DIR, a real Hardhat node):
 * 1. killed right after accepting the refund, before anything was signed (a node that runs the API but
 *    not the money-out service: the refund is reserved and pending, nothing on chain);
 * 2. killed after signing it and before the broadcast result (its RPC goes through a proxy that passes the
 *    transaction on, so it lands, but never answers);
 * then a third node resumes the persisted row: the buyer received the refund exactly once (the settlement
 * wallet's nonce moved once), the refund completed with that transaction's hash, the ledger is clean.
 */
import { Wallet } from 'ethers';
import { http, startTestNode } from '../helpers/node.ts';
import { startCrashEnv, type CrashEnv } from '../helpers/crash-env.ts';
import { spawnNode } from '../helpers/child-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';
import type { RefundDoc } from '../../lib/refunds/model.ts';

jest.setTimeout(300_000);

/** the services of a node that answers the API but sends nothing on chain */
const API_ONLY = 'api,discovery,merchants,merchant-actors,operators,sessions,session-actors,wallets,refunds,webhooks,events';

describe('a node killed while refunding', () => {
  let crash: CrashEnv;

  beforeAll(async () => {
    crash = await startCrashEnv();
  }, 120_000);
  afterAll(async () => {
    await crash?.close();
  });

  it('resumes it: one on-chain transfer to the buyer, refund completed', async () => {
    const { chain, proxy, children, nodes, kill, peek } = crash;
    const env = { ...crash.env, LOG_LEVEL: 'warn' };
    // 1. a buyer pays 0.05 ETH from an address of their own; the merchant's wallet also holds ETH for gas
    const a = await startTestNode(env);
    const m = await merchant(a);
    const buyer = Wallet.createRandom();
    await chain.setBalance(buyer.address, 10n ** 18n);
    const s = await createSession(a, m, RAILS.eth, 0.05);
    const gas = await createSession(a, m, RAILS.eth, 0.2);
    await chain.sendEth(buyer, s.address, 5n * 10n ** 16n);
    await chain.sendEth(3, gas.address, 2n * 10n ** 17n);
    await sessionWhen(a, m, s.session_id, 'completion', (x) => x.status === 'completed');
    const wallet = await until(
      'the ETH to be swept and available',
      async () => {
        const w = (await a.request('GET', '/v1/wallets', { key: m.apiKey })).body.data?.find((x: any) => x.chain === 'ethereum');
        const b = w?.balances.find((x: any) => x.token === 'ETH');
        return b && b.pending_subunits === '0' && BigInt(b.available_subunits) > 2n * 10n ** 17n ? w : null;
      },
      90_000,
    );
    await a.stop();
    const before = await chain.provider.getBalance(buyer.address);

    // 2. killed right after accepting: reserved, pending, nothing signed
    const first = await spawnNode({ ...env, SERVICES: API_ONLY });
    children.push(first);
    const created = await http(first.url, 'POST', `/v1/payment_sessions/${s.session_id}/refunds`, {
      key: m.apiKey,
      body: { reason: 'requested_by_customer' },
      headers: { 'Idempotency-Key': 'crash-1' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'pending', destination: buyer.address, amount_subunits: '50000000000000000' });
    await kill(first);
    const id = created.body.id as string;
    expect(await peek((st) => st.get<ChainTxDoc>(CHAIN_TXS, `refund:${id}`))).toBeNull();

    // 3. killed after signing, before the broadcast result: the transaction lands, the node never hears
    const second = await spawnNode({ ...env, ETHEREUM_TESTNET_RPC_URL: proxy.url });
    children.push(second);
    await proxy.held;
    await kill(second);
    const row = (await peek((st) => st.get<ChainTxDoc>(CHAIN_TXS, `refund:${id}`)))!;
    expect(row).toMatchObject({ status: 'signed', broadcasts: 0, purpose: 'refund', ref: id });
    expect((await peek((st) => st.get<RefundDoc>('refunds', id)))!.status).toBe('processing');
    expect(await chain.provider.getBalance(buyer.address)).toBe(before + 5n * 10n ** 16n); // it landed

    // 4. a restarted node resumes the row: the same bytes, confirmed; nothing signed again
    const b = await startTestNode(env);
    nodes.push(b);
    const done = await until(
      'the refund to complete',
      async () => {
        const r = (await b.request('GET', `/v1/payment_sessions/${s.session_id}/refunds/${id}`, { key: m.apiKey })).body;
        return r.status === 'completed' || r.status === 'failed' ? r : null;
      },
      90_000,
    );
    expect(done).toMatchObject({ status: 'completed', tx_hash: row.tx_hash });
    expect((await b.node.rt.store.get<ChainTxDoc>(CHAIN_TXS, `refund:${id}`))!.attempts).toHaveLength(1);
    expect(await chain.provider.getBalance(buyer.address)).toBe(before + 5n * 10n ** 16n); // once
    expect(await chain.provider.getTransactionCount(wallet.address)).toBe(1); // one transaction from the wallet
    // the replayed key answers the same refund; the session says what was refunded
    const replay = await b.request('POST', `/v1/payment_sessions/${s.session_id}/refunds`, {
      key: m.apiKey,
      body: { reason: 'requested_by_customer' },
      headers: { 'Idempotency-Key': 'crash-1' },
    });
    expect(replay.body).toMatchObject({ id, status: 'completed' });
    expect((await b.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: m.apiKey })).body.refunded_amount_subunits).toBe(
      '50000000000000000',
    );
    const w = (await b.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body;
    expect(BigInt(w.balances.find((x: any) => x.token === 'ETH').available_subunits)).toBe(await chain.provider.getBalance(wallet.address));
    expect(await b.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
  });
});
