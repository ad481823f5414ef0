/**
 * Exactness of agent spends under concurrency, through HTTP (issue 22): the wallet actor decides the
 * attempts queued for a wallet in batches (one write per turn), and that must change nothing a client can
 * see. Many concurrent attempts of mixed amounts against a window cap: the cap is never passed, no
 * capacity is lost, the wallet loses exactly what the allowed attempts spent and the target gains it, one
 * reference is one attempt, an x402 challenge is paid once, and the ledger checks out. Over HTTP the
 * attempts reach the actor spread out in time; sent to the actor host in one tick they are one batch.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { RAIL, attemptBody, attemptMessage, balanceOf, createWallet, fund, walletActors, type WalletRef } from './agents-helpers.ts';
import type { AgentWalletState } from '../../lib/agents/state.ts';

let t: TestNode;
let m: RegisteredMerchant;
const CAP = 30_000_000n;

beforeAll(async () => {
  t = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: 'http://127.0.0.1:9',
    ETHEREUM_TESTNET_USDC_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  m = await registerMerchant(t);
});
afterAll(async () => t?.stop());

const attempt = (w: WalletRef, body: unknown) => t.request('POST', `/v1/agent-wallets/${w.id}/spend-attempts`, { key: m.apiKey, body });
const capped = async (w: WalletRef, maxCount = 1000) =>
  t.request('PUT', `/v1/agent-wallets/${w.id}/policy`, {
    key: m.apiKey,
    body: {
      limits: {
        [RAIL]: { per_attempt_subunits: '5000000', windows: [{ duration: '1h', max_subunits: CAP.toString(), max_count: maxCount }] },
      },
    },
  });
/** deterministic mixed amounts, 0.1 to 0.9 USDC */
const amountOf = (i: number) => BigInt(100_000 + ((i * 7919) % 9) * 100_000);

it('200 concurrent attempts on one wallet against a cap: never past it, nothing lost, balances exact', async () => {
  const agent = await createWallet(t, m, 'agent');
  const target = await createWallet(t, m, 'merchant');
  await fund(t, m, agent, 100_000_000n);
  await capped(agent);
  const before = { agent: await balanceOf(t, m, agent.id), target: await balanceOf(t, m, target.id) };
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt(agent, attemptBody(target.address, amountOf(i)))));
  expect(results.map((r) => r.status)).toEqual(Array(200).fill(201));
  const allowed = results.filter((r) => r.body.status === 'pending').map((r) => r.body);
  const denied = results.filter((r) => r.body.status === 'denied').map((r) => r.body);
  expect(allowed.length + denied.length).toBe(200);
  const spent = allowed.reduce((s, a) => s + BigInt(a.amount_subunits), 0n);
  expect(spent).toBeLessThanOrEqual(CAP);
  // decided one after another: an attempt refused for the cap did not fit then, nor does it now
  expect(denied.every((a) => a.reason === 'window_amount_exceeded')).toBe(true);
  for (const a of denied) expect(BigInt(a.amount_subunits)).toBeGreaterThan(CAP - spent);
  // settled in the ledger in the decision's own write
  for (const a of allowed) expect(a.settlement).toMatchObject({ status: 'settled', execution: 'ledger' });
  for (const a of denied) expect(a.ledger_entry_id).toBeUndefined();
  expect(await balanceOf(t, m, agent.id)).toBe(before.agent - spent);
  expect(await balanceOf(t, m, target.id)).toBe(before.target + spent);
  expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
});

it('the count cap holds too, and one reference sent many times at once is one attempt', async () => {
  const agent = await createWallet(t, m, 'agent');
  const target = await createWallet(t, m, 'merchant');
  await fund(t, m, agent, 50_000_000n);
  await capped(agent, 25);
  const before = await balanceOf(t, m, agent.id);
  const body = (i: number) => attemptBody(target.address, 100_000n, i % 4 === 0 ? { reference: `ref-${i % 12}` } : {});
  const results = await Promise.all(Array.from({ length: 120 }, (_, i) => attempt(agent, body(i))));
  expect(results.every((r) => r.status === 201 || r.status === 200)).toBe(true);
  // every answer naming one reference is the same attempt
  const byRef = new Map<string, Set<string>>();
  for (const r of results)
    if (r.body.reference) (byRef.get(r.body.reference) ?? byRef.set(r.body.reference, new Set()).get(r.body.reference)!).add(r.body.id);
  expect([...byRef.values()].every((ids) => ids.size === 1)).toBe(true);
  const distinct = new Map(results.map((r) => [r.body.id, r.body]));
  const allowed = [...distinct.values()].filter((a) => a.status === 'pending');
  expect(allowed).toHaveLength(25);
  expect([...distinct.values()].filter((a) => a.status === 'denied').every((a) => a.reason === 'window_count_exceeded')).toBe(true);
  expect(await balanceOf(t, m, agent.id)).toBe(before - 25n * 100_000n);
  // the same reference with another body is refused, however many at once
  const mismatched = await Promise.all(
    Array.from({ length: 5 }, () => attempt(agent, attemptBody(target.address, 200_000n, { reference: 'ref-0' }))),
  );
  expect(mismatched.map((r) => r.status)).toEqual(Array(5).fill(409));
});

it('x402 challenges paid by several wallets at once: each is paid once and redeemed once', async () => {
  const wallets = await Promise.all(Array.from({ length: 3 }, () => createWallet(t, m, 'agent')));
  for (const w of wallets) {
    await fund(t, m, w, 10_000_000n);
    await capped(w);
  }
  const challenges = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const r = await t.request('POST', '/v1/x402/challenges', {
        key: m.apiKey,
        body: {
          resource: `/exact/${i}`,
          amount_subunits: '250000',
          paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
        },
      });
      expect(r.status).toBe(201);
      return r.body;
    }),
  );
  const payTo = challenges[0].challenge.payTo;
  const payee = (await t.request('GET', '/v1/wallets?limit=100', { key: m.apiKey })).body.data.find(
    (w: { address: string }) => w.address === payTo,
  );
  const gainedBefore = await balanceOf(t, m, payee.id);
  const before = await Promise.all(wallets.map((w) => balanceOf(t, m, w.id)));
  // every wallet pays every challenge, twice, all at once
  const tries = challenges.flatMap((c) =>
    [...wallets, ...wallets].map((w) => attempt(w, attemptBody(payTo, 250_000n, { reference: c.challenge_id })).then((r) => ({ w, c, r }))),
  );
  const answers = await Promise.all(tries);
  expect(answers.every(({ r }) => r.status === 201 || r.status === 200)).toBe(true);
  for (const c of challenges) {
    const paid = new Set(answers.filter(({ c: x, r }) => x === c && r.body.status === 'pending').map(({ r }) => r.body.id));
    expect(paid.size).toBe(1);
    const [id] = paid;
    const proof = answers.find(({ r }) => r.body.id === id)!.r.body.spend_reference;
    const redeemed = await Promise.all(
      [1, 2].map(() =>
        t.request('POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: `/exact/${challenges.indexOf(c)}` } }),
      ),
    );
    expect(redeemed.map((r) => r.status).sort()).toEqual([200, 402]);
  }
  const spent = (await Promise.all(wallets.map((w) => balanceOf(t, m, w.id)))).reduce((s, b, i) => s + (before[i] - b), 0n);
  expect(spent).toBe(8n * 250_000n);
  expect((await balanceOf(t, m, payee.id)) - gainedBefore).toBe(8n * 250_000n);
  expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
});

it('attempts queued in one tick are decided as one batch (one write of the wallet) and stay exact', async () => {
  const agent = await createWallet(t, m, 'agent');
  const target = await createWallet(t, m, 'merchant');
  await fund(t, m, agent, 100_000_000n);
  await capped(agent);
  const before = { agent: await balanceOf(t, m, agent.id), target: await balanceOf(t, m, target.id) };
  const version = async () => (await t.node.rt.store.get<AgentWalletState>('agent_wallet_states', agent.id))!.version!;
  const v0 = await version();
  const to = { address: target.address, walletId: target.id };
  const send = (amount: bigint, reference: string | null = null) =>
    walletActors(t).send(agent.id, attemptMessage(m, agent, to, amount, reference));
  const replies = await Promise.all(
    Array.from({ length: 150 }, (_, i) => (i % 10 === 0 ? send(100_000n, `batch-ref-${i % 30}`) : send(amountOf(i)))),
  );
  const attempts = new Map(replies.map((r) => [r.attempt!.id, r.attempt!]));
  // one turn, one write of the wallet's document (the first message alone only if its turn started first)
  expect((await version()) - v0).toBeLessThanOrEqual(2);
  // the three references sent five times each are three attempts
  expect(attempts.size).toBe(150 - 15 + 3);
  const allowed = [...attempts.values()].filter((a) => a.status === 'pending');
  const spent = allowed.reduce((s, a) => s + BigInt(a.amount_subunits), 0n);
  expect(spent).toBeLessThanOrEqual(CAP);
  for (const a of attempts.values()) if (a.status === 'denied') expect(BigInt(a.amount_subunits)).toBeGreaterThan(CAP - spent);
  expect(await balanceOf(t, m, agent.id)).toBe(before.agent - spent);
  expect(await balanceOf(t, m, target.id)).toBe(before.target + spent);
  expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
});

/** the sum of every attempt the service recorded on a wallet, as its API lists them (every page) */
async function listedSpent(w: WalletRef): Promise<bigint> {
  let sum = 0n;
  for (let cursor: string | null = null; ;) {
    const r: { status: number; body: { data: Array<{ status: string; amount_subunits: string }>; next_cursor: string | null } } =
      await t.request('GET', `/v1/agent-wallets/${w.id}/spend-attempts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
        key: m.apiKey,
      });
    expect(r.status).toBe(200);
    for (const a of r.body.data) if (a.status === 'pending') sum += BigInt(a.amount_subunits);
    if (!(cursor = r.body.next_cursor)) return sum;
  }
}

it('wallets that run out of money under concurrency, all paying one payee: never below zero, every loss exactly what was recorded', async () => {
  const agents = await Promise.all(Array.from({ length: 3 }, () => createWallet(t, m, 'agent')));
  const payee = await createWallet(t, m, 'merchant');
  const FUNDS = 3_000_000n; // well under the cap: the money runs out first
  for (const a of agents) {
    await fund(t, m, a, FUNDS);
    await capped(a);
  }
  const payeeBefore = await balanceOf(t, m, payee.id);
  const before = await Promise.all(agents.map((a) => balanceOf(t, m, a.id)));
  const results = await Promise.all(
    agents.flatMap((a, k) =>
      Array.from({ length: 70 }, (_, i) => attempt(a, attemptBody(payee.address, amountOf(i + k))).then((r) => ({ a, r }))),
    ),
  );
  expect(results.every(({ r }) => r.status === 201)).toBe(true);
  let total = 0n;
  for (const [k, a] of agents.entries()) {
    const mine = results.filter((x) => x.a === a).map(({ r }) => r.body);
    const allowed = mine.filter((x) => x.status === 'pending');
    const spent = allowed.reduce((s, x) => s + BigInt(x.amount_subunits), 0n);
    const after = await balanceOf(t, m, a.id);
    expect(after).toBeGreaterThanOrEqual(0n);
    // what the answers said, what the API lists and what the ledger holds agree to the unit
    expect(before[k] - after).toBe(spent);
    expect(await listedSpent(a)).toBe(spent);
    // refused only for want of money: each refused amount did not fit then, and does not fit now
    const denied = mine.filter((x) => x.status === 'denied');
    expect(denied.length).toBeGreaterThan(0);
    for (const x of denied) {
      expect(x.reason).toBe('insufficient_funds');
      expect(BigInt(x.amount_subunits)).toBeGreaterThan(after);
    }
    total += spent;
  }
  expect((await balanceOf(t, m, payee.id)) - payeeBefore).toBe(total);
  expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
});
