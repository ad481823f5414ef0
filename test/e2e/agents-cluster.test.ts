/**
 * Agent spend attempts on two nodes over a real NATS server sharing one store: attempts on one wallet sent
 * to both nodes at once, and straight into both nodes' local actor hosts at once (two holders of one
 * actor, as during a rebalance), never reserve more than the window cap.
 */
import { Wallet } from 'ethers';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import type { TestNode } from '../helpers/node.ts';
import { startTwoNodes, type TwoNodes } from '../helpers/two-nodes.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { RAIL, attemptBody, attemptMessage, balanceOf, createWallet, fund, walletActors } from '../integration/agents-helpers.ts';

let db: TestDatabase;
let nodes: TwoNodes;
let a: TestNode;
let b: TestNode;
let m: RegisteredMerchant;

beforeAll(async () => {
  db = await freshDatabase('agents_cluster');
  nodes = await startTwoNodes('agents', { STORE_URL: db.url, RATE_LIMIT_PER_MINUTE: '100000' });
  ({ a, b } = nodes);
  m = await registerMerchant(a);
}, 120_000);

afterAll(async () => {
  await nodes?.stop();
  await db?.drop();
});

it('attempts on one wallet through both nodes never pass the window cap', async () => {
  const w = await createWallet(a, m, 'agent');
  await fund(a, m, w, 50_000_000n);
  await a.request('PUT', `/v1/agent-wallets/${w.id}/policy`, {
    key: m.apiKey,
    body: { limits: { [RAIL]: { windows: [{ duration: '1h', max_subunits: '10000000' }] } } },
  });
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).request('POST', `/v1/agent-wallets/${w.id}/spend-attempts`, {
        key: m.apiKey,
        body: attemptBody(Wallet.createRandom().address, 700_000n),
      }),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(Array(40).fill(201));
  expect(results.filter((r) => r.body.status === 'pending')).toHaveLength(14);
  expect(await balanceOf(a, m, w.id)).toBe(50_000_000n - 14n * 700_000n);
});

it("two holders of one wallet actor (both nodes' local hosts at once) still decide against one window", async () => {
  const w = await createWallet(a, m, 'agent');
  await fund(a, m, w, 50_000_000n);
  await a.request('PUT', `/v1/agent-wallets/${w.id}/policy`, {
    key: m.apiKey,
    body: { limits: { [RAIL]: { windows: [{ duration: '1h', max_subunits: '10000000' }] } } },
  });
  // the facts the facade would gather, sent straight to both nodes' actor hosts
  const target = { address: Wallet.createRandom().address, walletId: null };
  const replies = await Promise.all(
    Array.from({ length: 40 }, (_, i) => walletActors(i % 2 ? a : b).send(w.id, attemptMessage(m, w, target, 700_000n))),
  );
  expect(replies.filter((r) => r.attempt!.status === 'pending')).toHaveLength(14);
  expect(await balanceOf(a, m, w.id)).toBe(50_000_000n - 14n * 700_000n);
});

it('spends settled in the ledger, batched on two holders of one wallet (HTTP and both local hosts at once): exact', async () => {
  const w = await createWallet(a, m, 'agent');
  const target = await createWallet(a, m, 'merchant');
  await fund(a, m, w, 50_000_000n);
  await a.request('PUT', `/v1/agent-wallets/${w.id}/policy`, {
    key: m.apiKey,
    body: { limits: { [RAIL]: { windows: [{ duration: '1h', max_subunits: '20000000' }] } } },
  });
  const before = await balanceOf(a, m, target.id);
  const [http, direct] = await Promise.all([
    Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 ? a : b).request('POST', `/v1/agent-wallets/${w.id}/spend-attempts`, {
          key: m.apiKey,
          body: attemptBody(target.address, 300_000n),
        }),
      ),
    ),
    Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        walletActors(i % 2 ? a : b).send(w.id, attemptMessage(m, w, { address: target.address, walletId: target.id }, 300_000n)),
      ),
    ),
  ]);
  expect(http.map((r) => r.status)).toEqual(Array(60).fill(201));
  const allowed = http.filter((r) => r.body.status === 'pending').length + direct.filter((r) => r.attempt!.status === 'pending').length;
  // 20 USDC of 0.3 each: 66 fit, whoever decided them
  expect(allowed).toBe(66);
  expect(await balanceOf(a, m, w.id)).toBe(50_000_000n - 66n * 300_000n);
  expect(await balanceOf(b, m, target.id)).toBe(before + 66n * 300_000n);
  expect(await a.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
});
