/**
 * A node killed between the commit of an outbox row and its delivery: the row is in the store, so a
 * second node over the same DATA_DIR delivers it, and the receiver sees exactly one successful delivery
 * of that event id. The first node is a real child process (`node index.ts`) killed with SIGKILL; it
 * commits the event itself (a sandbox session simulated to completion over its HTTP API).
 */
import { rmSync } from 'node:fs';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { registerMerchant } from '../helpers/merchant.ts';
import { freePort } from '../helpers/ports.ts';
import { spawnNode as spawnChild, type ChildNode } from '../helpers/child-node.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import type { DeliveryDoc } from '../../lib/webhooks/delivery.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { http } from '../helpers/node.ts';
import { sleep, startReceiver, waitFor, waitForEvent, type Receiver } from '../integration/webhooks-helpers.ts';

/** each test's PostgreSQL database, by its DATA_DIR */
const dbs = new Map<string, TestDatabase>();

function spawnNode(dataDir: string, env: Record<string, string>): Promise<ChildNode> {
  return spawnChild({ DATA_DIR: dataDir, STORE_URL: dbs.get(dataDir)!.url, LOG_LEVEL: 'warn', ...env });
}

/** The child node commits the event itself: a sandbox session, simulated to completion over HTTP. */
async function completeSession(child: ChildNode, m: RegisteredMerchant, store: Store): Promise<{ id: string }> {
  const created = await http(child.url, 'POST', '/v1/payment_sessions', {
    key: m.apiKey,
    body: { amount: 3, expires_in: '1h', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } },
  });
  if (created.status !== 201) throw new Error(`session not created: ${created.status} ${created.text}`);
  const sim = await http(child.url, 'POST', `/v1/payment_sessions/${created.body.session_id}/simulate`, { key: m.apiKey });
  if (sim.status !== 200) throw new Error(`simulate failed: ${sim.status} ${sim.text}`);
  const [ev] = await store.find<DeliveryDoc>('webhook_events', { session_id: created.body.session_id });
  if (!ev) throw new Error('simulate committed no webhook event');
  return { id: ev.id };
}

function kill(child: ChildNode): Promise<void> {
  return new Promise((resolve) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return resolve();
    child.proc.once('exit', () => resolve());
    child.proc.kill('SIGKILL');
  });
}

describe('a node killed between commit and delivery still delivers, once', () => {
  const children: ChildNode[] = [];
  const receivers: Receiver[] = [];
  const nodes: TestNode[] = [];
  const stores: Store[] = [];
  const dirs: string[] = [];

  afterAll(async () => {
    await Promise.all(children.map(kill));
    for (const n of nodes) await n.stop();
    for (const s of stores) await s.close();
    await Promise.all(receivers.map((r) => r.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const d of dbs.values()) await d.drop();
  });

  /** A merchant whose webhook_url points at `port` on 127.0.0.1, registered over the given data dir. */
  async function merchantOn(dataDir: string, port: number) {
    dbs.set(dataDir, await freshDatabase('webhooks_crash'));
    const t = await startTestNode({ DATA_DIR: dataDir, STORE_URL: dbs.get(dataDir)!.url });
    try {
      return await registerMerchant(t, { webhook_url: `http://127.0.0.1:${port}/hook` });
    } finally {
      await t.stop();
    }
  }

  it('first attempt unreachable, node SIGKILLed: a second node delivers the event exactly once', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const rxPort = await freePort(); // nobody listens yet: the first node's attempt is refused
    const m = await merchantOn(dataDir, rxPort);

    const child = await spawnNode(dataDir, { WEBHOOK_SCAN_INTERVAL_MS: '100', WEBHOOK_RETRY_BASE_MS: '3000', WEBHOOK_TIMEOUT_MS: '2000' });
    children.push(child);
    const store = await openStore(dbs.get(dataDir)!.url);
    stores.push(store);
    const ev = await completeSession(child, m, store);
    const seen = await waitForEvent(store, ev.id, (d) => d.attempts.length >= 1, 'the child node to make its first attempt');
    await kill(child);
    expect(seen.status).toBe('pending');
    expect(seen.attempts[0]).toMatchObject({ status: null, error: 'connection_refused' });

    const rx = await startReceiver(() => 200, rxPort);
    receivers.push(rx);
    const second = await startTestNode({
      DATA_DIR: dataDir,
      STORE_URL: dbs.get(dataDir)!.url,
      WEBHOOK_SCAN_INTERVAL_MS: '100',
      WEBHOOK_RETRY_BASE_MS: '3000',
    });
    nodes.push(second);
    const row = await waitForEvent(second.node.rt.store, ev.id, (d) => d.status === 'delivered', 'the second node to deliver', 60_000);
    await sleep(1000); // several more scans: nothing is sent again
    expect(rx.forEvent(ev.id)).toHaveLength(1);
    expect(rx.deliveredCount(ev.id)).toBe(1);
    expect(row.attempts.map((a) => a.error)).toEqual(['connection_refused', null]);
  }, 120_000);

  it('killed in the middle of an attempt: the lease runs out and another node delivers, once', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    // the first request is held open (the node dies while waiting); later ones are answered 200
    const rx = await startReceiver((_r, n) => (n === 1 ? 'hang' : 200));
    receivers.push(rx);
    const m = await merchantOn(dataDir, rx.port);

    // the attempt's deadline (3 s) leaves ample time to kill the node while it waits; its lease is then
    // 2 × 3 s + 5 s, after which the second node may take the row
    const child = await spawnNode(dataDir, { WEBHOOK_SCAN_INTERVAL_MS: '100', WEBHOOK_TIMEOUT_MS: '3000' });
    children.push(child);
    const store = await openStore(dbs.get(dataDir)!.url);
    stores.push(store);
    const ev = await completeSession(child, m, store);
    await waitFor('the child node to dial', () => rx.forEvent(ev.id).length === 1);
    await kill(child);

    const second = await startTestNode({
      DATA_DIR: dataDir,
      STORE_URL: dbs.get(dataDir)!.url,
      WEBHOOK_SCAN_INTERVAL_MS: '100',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
    nodes.push(second);
    const row = await waitForEvent(
      second.node.rt.store,
      ev.id,
      (d) => d.status === 'delivered',
      'the second node to deliver after the lease',
      60_000,
    );
    await sleep(1000);
    expect(rx.forEvent(ev.id)).toHaveLength(2);
    expect(rx.deliveredCount(ev.id)).toBe(1);
    // the killed attempt never committed an outcome; the log holds the delivery
    expect(row.attempts.map((a) => [a.status, a.error])).toEqual([[200, null]]);
  }, 120_000);
});
