/**
 * A node (`node index.ts`, its own process) on a PostgreSQL this test owns, under steady traffic of
 * session creates (each with an Idempotency-Key) and simulated completions, while PostgreSQL is shut down
 * immediately (`pg_ctl stop -m immediate`: connections drop as in a crash) and started again:
 * - while it is down, every answer is a success or a 503 in the error envelope that says retry
 *   (retryable: true), never a 500 and never a dropped connection, and the process stays up;
 * - once it is back, the same process serves again without a restart (the store reconnects with backoff);
 * - nothing is half-written: every request answered 503 is sent again with its key and gets exactly one
 *   session, the store holds exactly the sessions the answers named, every completed session has one
 *   simulated deposit and one `payment_session.completed` event (in the same write), and the ledger's
 *   invariants hold.
 */
import { rmSync } from 'node:fs';
import { freshDatabase, startPostgresServer, type PgServer, type TestDatabase } from '../helpers/postgres.ts';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';
import { startTestNode, tempDir } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { eventually } from '../helpers/wait.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { checkStoredLedger } from '../../lib/ledger/check.ts';

const WORKERS = 4;
const RAIL = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Phase = 'up' | 'down' | 'back';
interface Answer {
  phase: Phase;
  what: string;
  status: number;
  body: any;
  requestId: string | null;
}

describe('a node whose PostgreSQL is shut down immediately and started again', () => {
  let server: PgServer;
  let db: TestDatabase;
  let dir: string;
  let m: RegisteredMerchant;
  let node: ChildNode;

  beforeAll(async () => {
    server = await startPostgresServer();
    db = await freshDatabase('pg_outage', server);
    dir = tempDir('pg-outage-');
    const env = { DATA_DIR: dir, STORE_URL: db.url, RATE_LIMIT_PER_MINUTE: '100000' };
    // the merchant is registered over the same store first (this also writes DATA_DIR/master.key)
    const t = await startTestNode(env);
    try {
      m = await registerMerchant(t);
    } finally {
      await t.stop();
    }
    node = await spawnNode({ ...env, LOG_LEVEL: 'warn', STORE_POOL_SIZE: '4' });
  }, 120_000);

  afterAll(async () => {
    await node?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 retryable while it is down, stays up, serves again once it is back, and writes nothing by halves', async () => {
    let phase: Phase = 'up';
    let stopping = false;
    const answers: Answer[] = [];
    const dropped: string[] = [];
    const keys = new Map<string, { sessionId?: string }>();
    const pid = node.proc.pid;

    const send = async (what: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
      const at = phase;
      try {
        const res = await fetch(node.url + path, {
          method,
          headers: { 'X-API-Key': m.apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        const a: Answer = {
          phase: at,
          what,
          status: res.status,
          body: text ? JSON.parse(text) : undefined,
          requestId: res.headers.get('x-request-id'),
        };
        answers.push(a);
        return a;
      } catch (e) {
        dropped.push(`${what} (${at}): ${String(e)}`);
        return null;
      }
    };
    const create = (key: string) =>
      send(
        `create ${key}`,
        'POST',
        '/v1/payment_sessions',
        { 'Idempotency-Key': key },
        { amount: 2, expires_in: '1h', paymentMethod: RAIL },
      );

    async function worker(w: number) {
      for (let i = 0; !stopping; i++) {
        const key = `outage-${w}-${i}`;
        keys.set(key, {});
        const a = await create(key);
        if (a?.status === 201) {
          keys.get(key)!.sessionId = a.body.session_id;
          await send(`simulate ${a.body.session_id}`, 'POST', `/v1/payment_sessions/${a.body.session_id}/simulate`);
        }
        if (phase === 'down') await sleep(50); // keep asking, without a busy loop
      }
    }

    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    await eventually('sessions to be created', () => answers.filter((a) => a.status === 201).length >= 8, 30_000, 50);

    phase = 'down';
    await server.crash!();
    const downAt = answers.length;
    await eventually(
      'requests to be answered while PostgreSQL is down',
      () => answers.slice(downAt).filter((a) => a.status === 503).length >= 10,
      30_000,
      50,
    );
    expect([node.proc.exitCode, node.proc.signalCode]).toEqual([null, null]);

    await server.start!();
    phase = 'back';
    const backAt = answers.length;
    await eventually('the same process to create sessions again', () => answers.slice(backAt).some((a) => a.status === 201), 30_000, 100);
    await sleep(500);
    stopping = true;
    await Promise.all(workers);

    // the process never went away, and every answer was a success or a 503 that says retry
    expect([node.proc.pid, node.proc.exitCode, node.proc.signalCode]).toEqual([pid, null, null]);
    expect(dropped).toEqual([]);
    const unexpected = answers.filter((a) => a.status !== 201 && a.status !== 200 && a.status !== 503);
    const traffic = answers.length;
    expect(unexpected.map((a) => `${a.what} (${a.phase}): ${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503);
    expect(unavailable.some((a) => a.phase === 'down')).toBe(true);
    for (const a of unavailable)
      expect(a.body).toEqual({
        code: 1,
        message: expect.stringMatching(/retry/),
        remediation: expect.any(String),
        request_id: a.requestId,
        retryable: true,
      });
    expect(node.output()).toMatch(/connection lost/);
    expect(node.output()).toMatch(/connection back/);

    // every create not answered 201 is sent again with its key, as a client does until it has an answer
    // (a key reserved just before the cut answers 409 "still in progress" until its reservation may be
    // resumed): one session per key, never two
    for (const [key, k] of keys) {
      if (k.sessionId) continue;
      let again = await create(key);
      for (let tries = 0; again && (again.status === 503 || (again.status === 409 && again.body.retryable)) && tries < 60; tries++) {
        await sleep(500);
        again = await create(key);
      }
      expect([key, again?.status === 200 || again?.status === 201]).toEqual([key, true]);
      k.sessionId = again!.body.session_id;
    }
    const store: Store = await openStore(db.url);
    try {
      let sessions = await store.find<{ id: string; status: string; deposits: Array<{ simulated: boolean }> }>('payment_sessions', {
        merchant_id: m.id,
      });
      expect(sessions.map((s) => s.id).sort()).toEqual([...new Set([...keys.values()].map((k) => k.sessionId!))].sort());
      expect(sessions.length).toBe(keys.size);
      // a simulate answered 503 (or never sent) is sent again; then each session completed exactly once
      for (const s of sessions.filter((x) => x.status !== 'completed')) {
        const sim = await send(`simulate ${s.id} again`, 'POST', `/v1/payment_sessions/${s.id}/simulate`);
        expect([s.id, sim?.status]).toEqual([s.id, 200]);
      }
      sessions = await store.find('payment_sessions', { merchant_id: m.id });
      const events = await store.find<{ id: string; session_id: string }>('webhook_events', {
        merchant_id: m.id,
        event_type: 'payment_session.completed',
      });
      const eventsOf = new Map<string, number>();
      for (const e of events) eventsOf.set(e.session_id, (eventsOf.get(e.session_id) ?? 0) + 1);
      for (const s of sessions)
        expect([s.id, s.status, s.deposits.filter((d) => d.simulated).length, eventsOf.get(s.id)]).toEqual([s.id, 'completed', 1, 1]);
      expect(events.length).toBe(sessions.length);
      const ledger = await checkStoredLedger(store);
      expect(ledger.problems).toEqual([]);
      console.log(
        `postgres outage: ${traffic} answers (${unavailable.length} × 503, ${unavailable.filter((a) => a.phase === 'down').length} while down), ${sessions.length} sessions, ledger ${ledger.counts.transfers} transfers ok`,
      );
    } finally {
      await store.close();
    }
  }, 150_000);
});
