/**
 * The Ethereum listener across restarts and nodes, on a real local chain:
 * - a node is stopped mid-way through a two-part payment; payments land while no listener runs; a new
 *   node on the same DATA_DIR (its cursor even rewound, as after a crash between storing deposits and
 *   saving the cursor) finds every payment and counts nothing twice;
 * - two nodes over a real NATS server on one store: only one holds the listener lease; when it stops,
 *   the other takes over and the next payment is found by it.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { CapturingMailer, startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { ensureNats } from '../helpers/nats.ts';
import { openStore } from '../../lib/store/index.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { startReceiver, type Receiver } from '../integration/webhooks-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { RAILS, createSession, depositsOf, getSession, sessionWhen, until, webhooksOf } from '../integration/chain-listener-helpers.ts';

jest.setTimeout(240_000);

describe('Ethereum listener: restart and lease', () => {
  let chain: HardhatNode;
  let usdc: TestUsdc;
  let rx: Receiver;
  const nodes: TestNode[] = [];
  const dirs: string[] = [];
  const dbs: TestDatabase[] = [];

  const env = (dir: string, extra: Record<string, string> = {}) => ({
    DATA_DIR: dir,
    ETHEREUM_TESTNET_RPC_URL: chain.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    CHAIN_POLL_INTERVAL_MS: '100',
    WEBHOOK_SCAN_INTERVAL_MS: '100',
    ...extra,
  });
  const start = async (e: Record<string, string>, mailer?: CapturingMailer) => {
    const n = await startTestNode(e, mailer ? { mailer } : {});
    nodes.push(n);
    return n;
  };
  // this node's own listener (a plain call may be served by the other node of the cluster)
  const status = async (n: TestNode) =>
    (await n.node.broker.call<Record<string, any>, object>('ethereum-listener.status', {}, { nodeID: n.node.broker.nodeID })).testnet;
  const morePasses = async (n: TestNode, k: number) => {
    const from = (await status(n)).passes;
    await until(`${k} more passes`, async () => (await status(n)).passes >= from + k);
  };

  beforeAll(async () => {
    chain = await startHardhatNode();
    usdc = await chain.deployTestUsdc();
    for (const i of [1, 2, 3]) await usdc.mint(chain.accounts[i]!.address, 1_000_000_000n);
    rx = await startReceiver();
  });

  afterAll(async () => {
    for (const n of nodes) await n.stop().catch(() => undefined);
    await rx?.close();
    await chain?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const d of dbs) await d.drop();
  });

  it('a listener stopped mid-way and a new one on the same DATA_DIR miss nothing and double nothing', async () => {
    const dir = tempDir('chain-restart-');
    dirs.push(dir);
    const a = await start(env(dir));
    const m = await merchant(a, { webhook_url: rx.url });
    const s1 = await createSession(a, m, RAILS.ethUsdc, 10);
    const s2 = await createSession(a, m, RAILS.ethUsdc, 3);
    await usdc.transfer(1, s1.address, 4_000_000n);
    await sessionWhen(a, m, s1.session_id, 'partial payment', (x) => x.status === 'partial_paid');
    const cursorBefore = (await a.node.rt.store.get<any>('listener_cursors', 'ethereum:testnet'))!.block as number;
    await a.stop();

    // money arrives while no listener runs
    await usdc.transfer(1, s1.address, 6_000_000n);
    await usdc.transfer(2, s2.address, 3_000_000n);
    await chain.mine(5);
    // and the cursor is rewound, as if the node had died after storing deposits but before saving it
    const store = await openStore(`sqlite:${join(dir, 'service.db')}`);
    const cursor = (await store.get<any>('listener_cursors', 'ethereum:testnet'))!;
    expect(cursor.block).toBeGreaterThanOrEqual(cursorBefore);
    await store.write([
      {
        op: 'cas',
        coll: 'listener_cursors',
        doc: { ...cursor, block: Math.max(-1, cursorBefore - 10), hashes: cursor.hashes.filter(([n]: [number]) => n <= cursorBefore - 10) },
        expected: cursor.version,
      },
    ]);
    await store.close();

    const b = await start(env(dir));
    const done1 = await sessionWhen(b, m, s1.session_id, 's1 completion', (x) => x.status === 'completed');
    const done2 = await sessionWhen(b, m, s2.session_id, 's2 completion', (x) => x.status === 'completed');
    // the listener goes on past the rewound range; nothing is counted twice
    await until('the listener to pass the head', async () => (await status(b)).last_stats?.cursor >= (await chain.blockNumber()));
    await morePasses(b, 3);
    const s1now = await getSession(b, m, s1.session_id);
    expect(s1now.deposits.map((d: any) => d.amount)).toEqual([4, 6]);
    expect(s1now.received_amount).toBe(10);
    expect((await getSession(b, m, s2.session_id)).received_amount).toBe(3);
    expect(done1.received_amount).toBe(10);
    expect(done2.received_amount).toBe(3);
    expect(await depositsOf(b, s1.session_id)).toHaveLength(2);
    expect(await depositsOf(b, s2.session_id)).toHaveLength(1);
    const events = await b.node.rt.store.find<any>('webhook_events', { session_id: s1.session_id });
    expect(events.map((e) => e.event_type).sort()).toEqual(['payment_session.completed', 'payment_session.partial_paid']);
    await until('the webhooks of s1', () => webhooksOf(rx, s1.session_id).length === 2);
    await b.stop();

    // the operator tool reads the same store: s1's two deposits, newest first
    const out = execFileSync('npm', ['run', '--silent', 'operator', '--', 'deposits', s1.session_id], {
      env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
    const listed = JSON.parse(out.slice(out.indexOf('{')));
    expect(listed.count).toBe(2);
    expect(listed.deposits.map((d: any) => [d.status, d.amount_subunits])).toEqual([
      ['credited', '6000000'],
      ['credited', '4000000'],
    ]);
  });

  it('two nodes: one holds the lease; when it stops the other takes over and finds the next payment', async () => {
    const nats = await ensureNats();
    const dir = tempDir('chain-lease-');
    dirs.push(dir);
    const db = await freshDatabase('chain_lease');
    dbs.push(db);
    const shared = env(dir, {
      TRANSPORTER: nats,
      NAMESPACE: `chains-${randomBytes(4).toString('hex')}`,
      STORE_URL: db.url,
      CHAIN_LEASE_TTL_MS: '2000',
    });
    const mailer = new CapturingMailer();
    const a = await start({ ...shared, NODE_ID: `chain-a-${randomBytes(3).toString('hex')}` }, mailer);
    const b = await start({ ...shared, NODE_ID: `chain-b-${randomBytes(3).toString('hex')}` }, mailer);
    await until(
      'both nodes to see each other',
      () =>
        a.node.broker.registry.getNodeList({ onlyAvailable: true, withServices: false }).length === 2 &&
        b.node.broker.registry.getNodeList({ onlyAvailable: true, withServices: false }).length === 2,
    );
    const m: RegisteredMerchant = await merchant(a, { webhook_url: rx.url });

    // exactly one holder, and it stays that way over several renewals
    const holders = async () => (await Promise.all([a, b].map(status))).map((x) => x.holding as boolean);
    await until('a holder', async () => (await holders()).filter(Boolean).length === 1);
    const [aHolds] = await holders();
    const holder = aHolds ? a : b;
    const standby = aHolds ? b : a;
    await morePasses(holder, 5);
    expect(await holders()).toEqual(aHolds ? [true, false] : [false, true]);
    expect((await status(standby)).passes).toBe(0);

    const s1 = await createSession(standby, m, RAILS.ethUsdc, 2);
    await usdc.transfer(3, s1.address, 2_000_000n);
    await sessionWhen(standby, m, s1.session_id, 'completion by the holder', (x) => x.status === 'completed');

    await holder.stop();
    await until('the standby to take over', async () => (await status(standby)).holding === true && (await status(standby)).passes > 0);
    const s2 = await createSession(standby, m, RAILS.ethUsdc, 2);
    const { receipt } = await usdc.transfer(3, s2.address, 2_000_000n);
    const done = await sessionWhen(standby, m, s2.session_id, 'completion by the new holder', (x) => x.status === 'completed');
    expect(done.explorer_url).toBeUndefined(); // a local chain: no public explorer
    expect(done.deposits.map((d: any) => d.tx_hash)).toContain(receipt!.hash);
    const lease = await standby.node.rt.store.get<any>('listener_leases', 'ethereum:testnet');
    expect(lease.owner.startsWith(standby.node.broker.nodeID)).toBe(true);
    // the new holder went on from the stored cursor: s1's deposit was not found twice
    await morePasses(standby, 3);
    expect(await depositsOf(standby, s1.session_id)).toHaveLength(1);
    expect((await getSession(standby, m, s1.session_id)).deposits).toHaveLength(1);
  });
});
