/**
 * Issue 21's "done when": three `npm start` nodes (`node index.ts`) with STORE_URL on one PostgreSQL
 * database, TRANSPORTER on one NATS and the same MASTER_KEY, SEED_MNEMONIC and NAMESPACE (each its own
 * DATA_DIR, as on three machines) form one service:
 * - the service's tables are in that database;
 * - a key issued on one node works on the others (registration, then a rotation on another node);
 * - sessions created on all three survive a node killed with SIGKILL mid-traffic and are readable,
 *   unchanged, from every node; the killed node restarts and rejoins (it serves, and its sessions too);
 * - each completed session's webhook event reaches the receiver (one event id per session; raw
 *   redeliveries counted: webhooks are at-least-once, a node killed mid-delivery may send one again);
 * - every node reports the same balances, and the ledger check is clean.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { Wallet } from 'ethers';
import pg from 'pg';
import { ensureNats } from '../helpers/nats.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';
import { http, tempDir, type TestNode } from '../helpers/node.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { registerMerchant } from '../helpers/merchant.ts';
import { eventually } from '../helpers/wait.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { checkStoredLedger } from '../../lib/ledger/check.ts';

const RAIL = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
const WORKERS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receiver(): Promise<{
  server: Server;
  url: string;
  deliveries: Array<{ eventId: string; type: string; sessionId: string }>;
}> {
  const deliveries: Array<{ eventId: string; type: string; sessionId: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      deliveries.push({
        eventId: String(req.headers['x-service-event-id'] ?? ''),
        type: body.type ?? body.event_type ?? '',
        sessionId: body.data?.session_id ?? body.session_id ?? '',
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries };
}

describe('three npm start nodes on one PostgreSQL database and NATS', () => {
  let db: TestDatabase;
  let smtp: SmtpReceiver;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let store: Store;
  const dirs: string[] = [];
  const nodes: ChildNode[] = [];
  let env: Record<string, string>;

  const start = async (i: number) => {
    const dir = tempDir(`pg-cluster-${i}-`);
    dirs.push(dir);
    nodes[i] = await spawnNode({ ...env, DATA_DIR: dir, NODE_ID: `pg-node-${i}` });
  };

  beforeAll(async () => {
    const nats = await ensureNats();
    [db, smtp, rx] = await Promise.all([freshDatabase('pg_cluster'), startSmtpReceiver(), receiver()]);
    env = {
      STORE_URL: db.url,
      TRANSPORTER: nats,
      NAMESPACE: `pg-${randomBytes(4).toString('hex')}`,
      MASTER_KEY: randomBytes(32).toString('hex'),
      SEED_MNEMONIC: Wallet.createRandom().mnemonic!.phrase,
      PUBLIC_URL: 'https://pay.example', // one public address in front of every node
      SMTP_URL: smtp.url,
      TRUSTED_EMAIL_DOMAINS: 'trusted.test',
      RATE_LIMIT_PER_MINUTE: '100000',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_SCAN_INTERVAL_MS: '100',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    await Promise.all([0, 1, 2].map(start));
    store = await openStore(db.url);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(nodes.filter(Boolean).map((n) => n.stop()));
    await store?.close();
    await Promise.all([db?.drop(), smtp?.stop(), new Promise((r) => rx?.server.close(r))]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('forms one service that loses nothing when a node is killed and rejoins', async () => {
    // the service's tables are in the database STORE_URL names
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const tables = (
      await c.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'")
    ).rows.map((r) => r.t);
    await c.end();
    expect(tables).toEqual(expect.arrayContaining(['payment_sessions', 'merchants', 'api_keys', 'webhook_events', 'ledger_transfers']));

    // a merchant registered on node 0; its key rotated on node 1; the new key works on all three
    const on = (n: ChildNode) =>
      ({ request: (m: string, p: string, o?: object) => http(n.url, m, p, o), call: async () => undefined }) as unknown as TestNode;
    const m = await registerMerchant(on(nodes[0]), { webhook_url: rx.url, codeFor: (email) => smtp.waitForCode(email) });
    for (const n of nodes) expect((await http(n.url, 'GET', '/v1/payment_sessions?limit=1', { key: m.apiKey })).status).toBe(200);
    const rotated = await http(nodes[1].url, 'POST', '/v1/me/credentials/rotate', { key: m.apiKey, body: {} });
    expect(rotated.status).toBe(200);
    const key: string = rotated.body.api_key;
    expect(key).not.toBe(m.apiKey);
    for (const n of nodes) expect((await http(n.url, 'GET', '/v1/payment_sessions?limit=1', { key })).status).toBe(200);

    // traffic on all three nodes; node 2 is SIGKILLed mid-traffic and restarted
    const live = () => nodes.filter((n) => n.proc.exitCode === null && n.proc.signalCode === null);
    let stopping = false;
    const sessions = new Map<string, string>(); // idempotency key -> session id
    const createdOn = new Map<string, number>();
    const unexpected: string[] = [];
    async function call(path: string, body: unknown, headers: Record<string, string> = {}, prefer?: number) {
      for (let attempt = 0; attempt < 300; attempt++) {
        const pool = live();
        const node = prefer !== undefined && pool.includes(nodes[prefer]) ? nodes[prefer] : pool[attempt % pool.length];
        try {
          const res = await http(node.url, 'POST', path, { key, body, headers });
          if (res.status >= 500 || res.status === 429 || (res.status === 409 && /in progress/.test(res.body?.message ?? ''))) {
            await sleep(100);
            continue;
          }
          return { ...res, node: nodes.indexOf(node) };
        } catch {
          await sleep(100);
        }
      }
      throw new Error(`${path} never answered`);
    }
    async function worker(w: number) {
      for (let i = 0; !stopping; i++) {
        const idem = `pg-${w}-${i}`;
        const created = await call(
          '/v1/payment_sessions',
          { amount: 2, expires_in: '1h', paymentMethod: RAIL },
          { 'Idempotency-Key': idem },
          (w + i) % 3,
        );
        if (created.status !== 201 && created.status !== 200) {
          unexpected.push(`create ${idem}: ${created.status} ${created.text}`);
          continue;
        }
        if (sessions.has(idem) && sessions.get(idem) !== created.body.session_id) unexpected.push(`key ${idem} named two sessions`);
        sessions.set(idem, created.body.session_id);
        createdOn.set(created.body.session_id, created.node);
        for (;;) {
          const sim = await call(`/v1/payment_sessions/${created.body.session_id}/simulate`, {});
          if (sim.status === 200) break;
          const now = await http(live()[0].url, 'GET', `/v1/payment_sessions/${created.body.session_id}`, { key });
          if (now.body?.status === 'completed') break;
          if (sim.status !== 409) {
            unexpected.push(`simulate ${created.body.session_id}: ${sim.status} ${sim.text}`);
            break;
          }
        }
      }
    }
    const traffic = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await sleep(3000);
    const before = sessions.size;
    await new Promise<void>((resolve) => {
      nodes[2].proc.once('exit', () => resolve());
      nodes[2].proc.kill('SIGKILL');
    });
    await sleep(2000);
    await start(2); // rejoins with a fresh DATA_DIR: everything it needs is in the store and the environment
    await sleep(3000);
    stopping = true;
    await traffic;
    expect(unexpected).toEqual([]);
    expect(before).toBeGreaterThan(3);
    const ids = [...new Set(sessions.values())];
    expect(ids.length).toBe(sessions.size);
    // sessions were created on every node, the restarted one included
    expect(new Set(createdOn.values())).toEqual(new Set([0, 1, 2]));

    // every session is readable, unchanged, from every node
    for (const id of ids) {
      const views = await Promise.all(nodes.map((n) => http(n.url, 'GET', `/v1/payment_sessions/${id}`, { key })));
      expect(views.map((v) => v.status)).toEqual([200, 200, 200]);
      expect(views[0].body.status).toBe('completed');
      expect(views[1].body).toEqual(views[0].body);
      expect(views[2].body).toEqual(views[0].body);
    }
    const stored = await store.find<{ id: string }>('payment_sessions', { merchant_id: m.id });
    expect(stored.map((s) => s.id).sort()).toEqual([...ids].sort());

    // one completed event per session, and each reaches the receiver
    const events = await store.find<{ id: string; session_id: string }>('webhook_events', {
      merchant_id: m.id,
      event_type: 'payment_session.completed',
    });
    expect(events.map((e) => e.session_id).sort()).toEqual([...ids].sort());
    await eventually(
      'every completed event to be delivered',
      () => events.every((e) => rx.deliveries.some((d) => d.eventId === e.id)),
      60_000,
      200,
    );
    const perSession = new Map<string, Set<string>>();
    for (const d of rx.deliveries.filter((x) => x.type === 'payment_session.completed'))
      perSession.set(d.sessionId, (perSession.get(d.sessionId) ?? new Set()).add(d.eventId));
    for (const id of ids) expect([id, perSession.get(id)?.size]).toEqual([id, 1]);
    const raw = rx.deliveries.filter((x) => x.type === 'payment_session.completed').length;

    // the same balances everywhere, and a clean ledger
    const wallets = await Promise.all(nodes.map((n) => http(n.url, 'GET', '/v1/wallets', { key })));
    expect(wallets.map((w) => w.status)).toEqual([200, 200, 200]);
    expect(wallets[1].body).toEqual(wallets[0].body);
    expect(wallets[2].body).toEqual(wallets[0].body);
    const ledger = await checkStoredLedger(store);
    expect(ledger.problems).toEqual([]);
    console.log(
      `three nodes on PostgreSQL: ${ids.length} sessions (${[0, 1, 2].map((i) => [...createdOn.values()].filter((n) => n === i).length).join('/')} created per node), one SIGKILL and rejoin, ${events.length} completed events, ${raw} deliveries (${raw - events.length} at-least-once redeliveries), ledger ${ledger.counts.transfers} transfers ok`,
    );
  }, 240_000);
});
