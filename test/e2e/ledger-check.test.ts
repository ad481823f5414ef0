/** `npm run operator ledger:check` against the running service's store: ok, then a planted fault found (exit 1). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, ETH_USDC } from '../integration/sessions-helpers.ts';
import { ACCOUNTS, walletAccount, type LedgerAccount } from '../../lib/ledger/index.ts';

const run = promisify(execFile);

describe('operator ledger:check', () => {
  let t: TestNode;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestNode();
    env = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'error' };
  });
  afterAll(async () => {
    await t.stop();
  });

  const check = () =>
    run(process.execPath, ['scripts/operator.ts', 'ledger:check'], { env }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );

  it('passes on a real ledger and finds a planted difference', async () => {
    const m = await merchant(t);
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 30, expires_in: '15m', paymentMethod: ETH_USDC },
    });
    await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey });
    const [w] = (await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data;
    const agent = await t.request('POST', '/v1/wallets', { key: m.apiKey, body: { type: 'agent', chain: 'ethereum', network: 'testnet' } });
    expect(
      (
        await t.request('POST', '/v1/payouts', {
          key: m.apiKey,
          body: { wallet_id: w.id, amount: 5, token: 'USDC', destination: agent.body.address },
        })
      ).status,
    ).toBe(201);

    const ok = await check();
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ledger ok: \d+ accounts, 2 transfers, 3 wallet transactions, 1 assets/m);

    // an account edited behind the ledger's back
    const id = walletAccount(w.id, 'ethereum:testnet:USDC', true);
    const acc = (await t.node.rt.store.get<LedgerAccount>(ACCOUNTS, id))!;
    await t.node.rt.store.write([{ op: 'cas', coll: ACCOUNTS, doc: { ...acc, credits_posted: '31000000' }, expected: acc.version }]);
    const bad = await check();
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^ledger FAILED/m);
    expect(bad.stdout).toContain(`problem: account ${id}: totals differ from the sum of its transfers`);
    expect(bad.stdout).toContain('problem: asset ethereum:testnet:USDC: posted balances sum to 1000000, not 0');
  });
});
