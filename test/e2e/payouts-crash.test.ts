/**
 * A node SIGKILLed after signing a payout and before the broadcast result: the node (a real child
 * process, `node index.ts`) talks to the chain through a proxy that passes the transaction on to the
 * Hardhat node (it lands) but never answers, and the node is killed while it waits. A second node on the
 * same DATA_DIR resumes the persisted row: exactly one transfer on chain (the wallet's nonce moved once,
 * the destination got the amount once), the payout completed with that transaction's hash.
 */
import { Wallet } from 'ethers';
import { http, startTestNode } from '../helpers/node.ts';
import { startCrashEnv, type CrashEnv } from '../helpers/crash-env.ts';
import { spawnNode } from '../helpers/child-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, until } from '../integration/chain-listener-helpers.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';

jest.setTimeout(240_000);

describe('a node killed between signing a payout and the broadcast result', () => {
  let crash: CrashEnv;

  beforeAll(async () => {
    crash = await startCrashEnv();
  }, 120_000);
  afterAll(async () => {
    await crash?.close();
  });

  it('resumes it on restart: one on-chain transfer, payout completed', async () => {
    const { chain, proxy, children, nodes, kill, peek, env } = crash;
    // 1. a merchant whose default wallet holds swept ETH
    const a = await startTestNode(env);
    const m = await merchant(a);
    const s = await createSession(a, m, RAILS.eth, 0.05);
    await chain.sendEth(1, s.address, 5n * 10n ** 16n);
    const wallet = await until(
      'the ETH to be swept and available',
      async () => {
        const w = (await a.request('GET', '/v1/wallets', { key: m.apiKey })).body.data?.[0];
        const b = w?.balances.find((x: any) => x.token === 'ETH');
        return b && b.pending_subunits === '0' && b.available_subunits !== '0' ? w : null;
      },
      90_000,
    );
    await a.stop();

    // 2. a real node process whose broadcast never returns: killed while it waits
    const child = await spawnNode({ ...env, ETHEREUM_TESTNET_RPC_URL: proxy.url, LOG_LEVEL: 'warn' });
    children.push(child);
    const url = child.url;
    const dest = Wallet.createRandom().address;
    const created = await http(url, 'POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: wallet.id, amount_subunits: '10000000000000000', token: 'ETH', destination: dest },
    });
    expect(created.status).toBe(201);
    await proxy.held;
    await kill(child);

    const row = (await peek((st) => st.get<ChainTxDoc>(CHAIN_TXS, `payout:${created.body.id}`)))!;
    expect(row).toMatchObject({ status: 'signed', broadcasts: 0, nonce: 0 }); // persisted before the send; its result never recorded
    expect(await chain.provider.getBalance(dest)).toBe(10n ** 16n); // yet it landed
    const payout = await peek((st) => st.get('payouts', created.body.id));
    expect(payout!.status).toBe('processing');

    // 3. a restarted node resumes the row: it re-sends the same bytes and confirms; nothing is signed again
    const b = await startTestNode(env);
    nodes.push(b);
    const done = await until(
      'the payout to complete',
      async () => {
        const p = (await b.request('GET', `/v1/payouts/${created.body.id}`, { key: m.apiKey })).body;
        return p.status === 'completed' || p.status === 'failed' ? p : null;
      },
      90_000,
    );
    expect(done).toMatchObject({ status: 'completed', tx_hash: row.tx_hash });
    const final = (await b.node.rt.store.get<ChainTxDoc>(CHAIN_TXS, `payout:${created.body.id}`))!;
    expect(final.attempts).toHaveLength(1);
    expect(await chain.provider.getBalance(dest)).toBe(10n ** 16n);
    expect(await chain.provider.getTransactionCount(wallet.address)).toBe(1); // exactly one transaction from the wallet
    const w = (await b.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body;
    expect(BigInt(w.balances.find((x: any) => x.token === 'ETH').available_subunits)).toBe(await chain.provider.getBalance(wallet.address));
  });
});
