/**
 * Two real nodes (`node index.ts` processes) over a real NATS server, sharing one PostgreSQL database and
 * DATA_DIR. While clients stream session creates (each with an Idempotency-Key, retried with the same key
 * until answered), simulates and webhook deliveries to a local receiver, one node is SIGKILLed again and
 * again and restarted. At the end nothing is lost or doubled: every key maps to exactly one session and
 * every 201 for it named that session, the store holds exactly those sessions, every session completed
 * once with one simulated deposit, one `payment_session.completed` event per session reached the receiver
 * (deduplicated by event id), and the ledger's invariants hold.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { ensureNats } from '../helpers/nats.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';
import { startTestNode, tempDir } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { eventually } from '../helpers/wait.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { checkStoredLedger } from '../../lib/ledger/check.ts';

const CYCLES = 6;
const WORKERS = 6;
const RAIL = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const T0 = Date.now();
const trace = (msg: string) => {
  if (process.env.KILL_TEST_TRACE) process.stderr.write(`[kill ${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);
};

interface Delivery {
  eventId: string;
  type: string;
  sessionId: string;
}

/** A webhook receiver that answers 200 after a short delay, so that kills land while attempts are in flight. */
async function receiver(): Promise<{ server: Server; url: string; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { type?: string; event_type?: string; data?: { session_id?: string }; session_id?: string } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        /* counted below as unknown */
      }
      const eventId = String(req.headers['x-service-event-id'] ?? '');
      setTimeout(
        () => {
          deliveries.push({ eventId, type: body.type ?? body.event_type ?? '', sessionId: body.data?.session_id ?? body.session_id ?? '' });
          res.writeHead(200).end('ok');
        },
        Math.floor(Math.random() * 150),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries };
}

describe('two nodes over NATS, one SIGKILLed repeatedly', () => {
  let dir: string;
  let db: TestDatabase;
  let store: Store;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let m: RegisteredMerchant;
  let env: Record<string, string>;
  const nodes: { a?: ChildNode; b?: ChildNode } = {};

  beforeAll(async () => {
    const nats = await ensureNats();
    dir = tempDir('cluster-kill-');
    db = await freshDatabase('cluster_kill');
    rx = await receiver();
    env = {
      TRANSPORTER: nats,
      NAMESPACE: `kill-${randomBytes(4).toString('hex')}`,
      DATA_DIR: dir,
      STORE_URL: db.url,
      RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_SCAN_INTERVAL_MS: '100',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    // the merchant is registered over the same store before the cluster starts
    // (it also creates DATA_DIR/master.key, the key every node of this cluster then shares)
    const t = await startTestNode({ DATA_DIR: dir, STORE_URL: env.STORE_URL, RATE_LIMIT_PER_MINUTE: env.RATE_LIMIT_PER_MINUTE });
    try {
      m = await registerMerchant(t, { webhook_url: rx.url });
    } finally {
      await t.stop();
    }
    [nodes.a, nodes.b] = await Promise.all([spawnNode({ ...env, NODE_ID: 'kill-a' }), spawnNode({ ...env, NODE_ID: 'kill-b' })]);
    store = await openStore(env.STORE_URL);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([nodes.a, nodes.b].filter(Boolean).map((n) => n!.stop()));
    await store?.close();
    await db?.drop();
    await new Promise((r) => rx?.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses and doubles nothing: creates, simulates and deliveries under SIGKILL and restart', async () => {
    let stopping = false;
    const keyToSessions = new Map<string, Set<string>>();
    const unexpected: string[] = [];
    let requests = 0;
    let retried = 0;

    /** Any live node: the clients use both; a killed node's requests fail over to the other. */
    const pick = () => {
      const live = [nodes.a, nodes.b].filter((n): n is ChildNode => !!n && n.proc.exitCode === null && n.proc.signalCode === null);
      return live[Math.floor(Math.random() * live.length)];
    };
    async function call(
      method: string,
      path: string,
      headers: Record<string, string>,
      body?: unknown,
    ): Promise<{ status: number; body: any }> {
      let last = '';
      for (let attempt = 0; ; attempt++) {
        if (attempt > 200) throw new Error(`${method} ${path} never answered; last: ${last}`);
        const node = pick();
        requests++;
        try {
          const res = await fetch(node.url + path, {
            method,
            headers: { 'X-API-Key': m.apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
            body: body ? JSON.stringify(body) : undefined,
            signal: AbortSignal.timeout(40_000),
          });
          const text = await res.text();
          const parsed = text ? JSON.parse(text) : undefined;
          // a node that died under the request, a call it forwarded, or a key whose first request is still in flight
          if (res.status >= 500 || res.status === 429 || (res.status === 409 && /still in progress/.test(parsed?.message ?? ''))) {
            retried++;
            last = `${res.status} ${text.slice(0, 200)}`;
            trace(`${method} ${path} via ${node.url}: ${last}`);
            await sleep(100);
            continue;
          }
          return { status: res.status, body: parsed };
        } catch (e) {
          last = String(e);
          trace(`${method} ${path} via ${node.url}: ${last}`);
          retried++;
          await sleep(100);
        }
      }
    }

    async function worker(w: number) {
      for (let i = 0; !stopping; i++) {
        const key = `kill-${w}-${i}`;
        const created = await call(
          'POST',
          '/v1/payment_sessions',
          { 'Idempotency-Key': key },
          { amount: 2, expires_in: '1h', paymentMethod: RAIL },
        );
        if (created.status !== 201 && created.status !== 200) {
          unexpected.push(`create ${key}: ${created.status} ${JSON.stringify(created.body)}`);
          continue;
        }
        const ids = keyToSessions.get(key) ?? new Set<string>();
        ids.add(created.body.session_id);
        keyToSessions.set(key, ids);
        // a replay of the same key must name the same session, whichever node answers
        if (i % 3 === 0) {
          const again = await call(
            'POST',
            '/v1/payment_sessions',
            { 'Idempotency-Key': key },
            { amount: 2, expires_in: '1h', paymentMethod: RAIL },
          );
          if (again.status < 300) ids.add(again.body.session_id);
          else unexpected.push(`replay ${key}: ${again.status} ${JSON.stringify(again.body)}`);
        }
        const id = created.body.session_id as string;
        for (;;) {
          const sim = await call('POST', `/v1/payment_sessions/${id}/simulate`, {});
          if (sim.status === 200) break;
          const now = await call('GET', `/v1/payment_sessions/${id}`, {});
          if (now.body?.status === 'completed') break; // an earlier simulate committed before its answer was lost
          if (sim.status !== 409) {
            unexpected.push(`simulate ${id}: ${sim.status} ${JSON.stringify(sim.body)}`);
            break;
          }
        }
      }
    }

    async function killer() {
      for (let c = 0; c < CYCLES; c++) {
        await sleep(1_000 + Math.random() * 1_500);
        const victim = nodes.b!;
        trace(`cycle ${c}: kill (sessions so far ${keyToSessions.size}, requests ${requests}, retried ${retried})`);
        await new Promise<void>((resolve) => {
          victim.proc.once('exit', () => resolve());
          victim.proc.kill('SIGKILL');
        });
        await sleep(200 + Math.random() * 600);
        nodes.b = await spawnNode({ ...env, NODE_ID: 'kill-b' });
        trace(`cycle ${c}: restarted`);
      }
      await sleep(1_000);
      stopping = true;
    }

    await Promise.all([killer(), ...Array.from({ length: WORKERS }, (_, w) => worker(w))]);
    trace(`stream done: ${keyToSessions.size} sessions`);
    expect(unexpected).toEqual([]);

    // every key named one session, and the store holds exactly the sessions the clients were told of
    const told = new Set<string>();
    for (const [key, ids] of keyToSessions) {
      expect([key, ids.size]).toEqual([key, 1]);
      told.add([...ids][0]);
    }
    const stored = await store.find<{ id: string; status: string; deposits: { simulated: boolean }[] }>('payment_sessions', {
      merchant_id: m.id,
    });
    expect(stored.map((s) => s.id).sort()).toEqual([...told].sort());
    expect(keyToSessions.size).toBeGreaterThanOrEqual(12);

    // each completed once, with one simulated deposit and one completed event
    for (const s of stored) {
      expect([s.id, s.status, s.deposits.filter((d) => d.simulated).length]).toEqual([s.id, 'completed', 1]);
    }
    const events = await store.find<{ id: string; session_id: string; event_type: string }>('webhook_events', {
      merchant_id: m.id,
      event_type: 'payment_session.completed',
    });
    const eventOf = new Map<string, string[]>();
    for (const e of events) eventOf.set(e.session_id, [...(eventOf.get(e.session_id) ?? []), e.id]);
    for (const s of stored) expect([s.id, eventOf.get(s.id)?.length]).toEqual([s.id, 1]);

    // the receiver gets every completed event; deduplicated by event id, exactly one per session
    await eventually(
      'every completed event to reach the receiver',
      () => {
        const got = new Set(rx.deliveries.map((d) => d.eventId));
        return events.every((e) => got.has(e.id));
      },
      60_000,
      200,
    ).catch(async (e) => {
      const got = new Set(rx.deliveries.map((d) => d.eventId));
      const missing = await Promise.all(events.filter((x) => !got.has(x.id)).map((x) => store.get('webhook_events', x.id)));
      throw new Error(
        `${(e as Error).message}: ${missing.length} of ${events.length} missing, e.g. ${JSON.stringify(missing.slice(0, 2))}\n${nodes.a!.output().slice(-3000)}\n${nodes.b!.output().slice(-3000)}`,
      );
    });
    const distinct = new Map<string, Set<string>>();
    for (const d of rx.deliveries.filter((x) => x.type === 'payment_session.completed')) {
      distinct.set(d.sessionId, (distinct.get(d.sessionId) ?? new Set()).add(d.eventId));
    }
    for (const s of stored) expect([s.id, distinct.get(s.id)?.size]).toEqual([s.id, 1]);

    const ledger = await checkStoredLedger(store);
    expect(ledger.problems).toEqual([]);
    expect(ledger.ok).toBe(true);

    console.log(
      `kill test: ${CYCLES} SIGKILL cycles, ${keyToSessions.size} sessions created and completed, ${requests} HTTP requests (${retried} retried), ${rx.deliveries.length} webhook deliveries (${events.length} distinct completed events), ledger ${ledger.counts.transfers} transfers ok`,
    );
  }, 170_000);
});
