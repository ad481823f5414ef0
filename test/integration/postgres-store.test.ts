/**
 * What the PostgreSQL store does beyond the port's contract (store-contract.test.ts runs that): schema
 * migrations taken once under an advisory lock, refusal of a newer schema, sslmode, and a lost
 * connection (server crash and restart) turning into retryable 503s, never a crash or a half-written
 * change. The crash tests run on a server this test starts itself (test/helpers/postgres.ts, the path CI
 * takes when no server answers on 5432).
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import { openStore, StoreUnavailableError, type Store } from '../../lib/store/index.ts';
import { PostgresStore, collationIsBytewise, textSearchQuery } from '../../lib/store/postgres.ts';
import { postgres } from '../../lib/store/sql/dialect.ts';
import type { Filter, FindOptions } from '../../lib/store/port.ts';
import { Statements } from '../../lib/store/sql/statements.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import { TRANSFERS, WTX_FORMAT, historyKey, walletAccount, walletHistory, type LedgerTransfer } from '../../lib/ledger/index.ts';
import { MIGRATIONS, SchemaTooNewError, SCHEMA_VERSION } from '../../lib/store/sql/migrations.ts';
import { loadConfig } from '../../config/index.ts';
import { freshDatabase, startPostgresServer, type PgServer, type TestDatabase } from '../helpers/postgres.ts';
import { startTestNode, tempDir } from '../helpers/node.ts';
import { eventually } from '../helpers/wait.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Loops': number;
  'Actual Rows': number;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

async function sql<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

describe('PostgreSQL store: schema', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await freshDatabase('pgschema');
  });
  afterEach(async () => {
    await db.drop();
  });

  it('migrates once when several nodes open a fresh database at the same time, and creates the service tables there', async () => {
    const stores = await Promise.all(Array.from({ length: 6 }, () => openStore(db.url)));
    try {
      const rows = await sql<{ version: number; name: string }>(db.url, 'SELECT version, name FROM _schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      const tables = await sql<{ table_name: string }>(
        db.url,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      expect(tables.map((t) => t.table_name)).toEqual(
        expect.arrayContaining(['payment_sessions', 'merchants', 'ledger_transfers', '_counters']),
      );
      // every node can work at once
      await Promise.all(stores.map((s, i) => s.write([{ op: 'insert', coll: 'merchants', doc: { id: `mer_${i}` } }])));
      expect(await stores[0].count('merchants', {})).toBe(6);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('starts beside a running node without locking the tables it writes (no wait, no deadlock)', async () => {
    await (await openStore(db.url)).close();
    // a running node in the middle of a write: row-exclusive locks on two service tables, held open
    const running = new pg.Client({ connectionString: db.url });
    await running.connect();
    try {
      await running.query('BEGIN');
      await running.query('LOCK TABLE payment_sessions, catalog_listings IN ROW EXCLUSIVE MODE');
      // DDL on an existing table (even IF NOT EXISTS) would queue behind that lock; the start must not
      const second = await openStore(db.url);
      expect(await second.count('payment_sessions', {})).toBe(0);
      await second.close();
    } finally {
      await running.query('ROLLBACK');
      await running.end();
    }
  });

  it('refuses a schema newer than this code, in one clear line, and changes nothing', async () => {
    await (await openStore(db.url)).close();
    await sql(db.url, 'INSERT INTO _schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
      SCHEMA_VERSION + 1,
      'from a newer release',
      new Date().toISOString(),
    ]);
    await expect(openStore(db.url)).rejects.toBeInstanceOf(SchemaTooNewError);
    // as an operator sees it: `npm start` prints one line and exits 1
    const child = spawn(process.execPath, ['index.ts'], {
      env: { ...process.env, STORE_URL: db.url, DATA_DIR: tempDir(), PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    const lines = err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`schema is at version ${SCHEMA_VERSION + 1} but this code knows versions up to ${SCHEMA_VERSION}`));
    const versions = await sql<{ version: number }>(db.url, 'SELECT version FROM _schema_migrations ORDER BY version');
    expect(versions.map((v) => v.version)).toEqual([...MIGRATIONS.map((m) => m.version), SCHEMA_VERSION + 1]);
  });

  it('honours sslmode and checks the collation and pool size', async () => {
    // the shared test server speaks no TLS: require must fail, disable must work
    await expect(new PostgresStore(`${db.url}?sslmode=require`).connect()).rejects.toThrow(/SSL/i);
    const plain = await new PostgresStore(`${db.url}?sslmode=disable`).connect();
    await plain.close();
    expect(() => loadConfig({ STORE_URL: `${db.url}?sslmode=sometimes` })).toThrow(/sslmode must be/);
    expect(() => loadConfig({ STORE_URL: db.url, STORE_POOL_SIZE: '0' })).toThrow(/STORE_POOL_SIZE/);
    expect(loadConfig({ STORE_URL: db.url, STORE_POOL_SIZE: '25' }).storePoolSize).toBe(25);
    expect(() => loadConfig({ STORE_URL: 'mysql://x' })).toThrow(/STORE_URL="mysql:\/\/x": must be/);
    expect(['C', 'C.UTF-8', 'POSIX', 'C.utf8'].every(collationIsBytewise)).toBe(true);
    expect(['en_US.UTF-8', 'de_DE', 'und-x-icu'].some(collationIsBytewise)).toBe(false);
  });
});

describe('PostgreSQL store: text search', () => {
  let db: TestDatabase;
  let store: PostgresStore;
  const spec = { name: 'listings', indexes: [{ fields: ['owner', 'id'] }], textIndex: ['search'] };
  beforeAll(async () => {
    db = await freshDatabase('pgtext');
    store = await new PostgresStore(db.url).connect();
    await store.ensure([spec]);
    // 100,000 rows (the catalog benchmark's scale; a table of a few thousand is scanned whole, as cheap),
    // in one statement: 1,000 owners, one row in ten says "common", rows 777 and 12345 say "zanzibar"
    await sql(
      db.url,
      `INSERT INTO listings (id, version, data) SELECT 'l' || lpad(i::text, 6, '0'), 1, jsonb_build_object('id', 'l' || lpad(i::text, 6, '0'), 'owner', 'o' || (i % 1000), 'search', 'item ' || i || ' ' || md5(i::text) || CASE WHEN i % 10 = 0 THEN ' common' ELSE '' END || CASE WHEN i IN (777, 12345) THEN ' Zanzibar' ELSE '' END) FROM generate_series(1, 100000) AS i`,
    );
    // VACUUM too, so the plans below are priced on a settled table (visibility map set, the trigram index's
    // pending list merged) whatever autovacuum has done yet: one CI run under load saw the rare term walk the
    // primary key after a plain ANALYZE (not reproduced here in 56 runs; the cause is not established)
    await sql(db.url, 'VACUUM ANALYZE listings');
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  /** the index scans that ran for the store's own statement, from EXPLAIN ANALYZE */
  async function scans(q: string, filter: Filter = {}): Promise<string[]> {
    const query = textSearchQuery('listings', ['search'], filter, { desc: true, limit: 21, text: { q, fields: ['search'] } });
    const [row] = await sql<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      db.url,
      `EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) ${postgres.numbered(query.sql)}`,
      query.params,
    );
    const ran: string[] = [];
    const walk = (n: PlanNode) => {
      if (n['Actual Loops'] > 0 && (n['Index Name'] || n['Node Type'] === 'Seq Scan'))
        ran.push(`${n['Node Type']} ${n['Index Name'] ?? ''}`.trim());
      n.Plans?.forEach(walk);
    };
    walk(row['QUERY PLAN'][0].Plan);
    return ran;
  }

  it('takes a rare, absent or exact term from the trigram index, and a common word from the next rows in order', async () => {
    expect(await scans('zanzibar')).toContain('Bitmap Index Scan listings__text');
    expect(await scans('no such words')).toContain('Bitmap Index Scan listings__text');
    expect(await scans('item 12345 ')).toContain('Bitmap Index Scan listings__text');
    // the window of the next rows filled the page: the other branch never ran
    expect(await scans('common')).toEqual(['Index Scan listings_pkey']);
    // one owner's rows fit in the window: its index alone
    expect(await scans('zanzibar', { owner: 'o777' })).toEqual([expect.stringMatching(/Index Scan listings__owner__id$/)]);
    expect(
      (await store.find('listings', {}, { desc: true, limit: 21, text: { q: 'ZANZIBAR', fields: ['search'] } })).map((d) => d.id),
    ).toEqual(['l012345', 'l000777']);
    expect(await store.find('listings', { owner: 'o777' }, { desc: true, limit: 21, text: { q: 'zanzibar', fields: ['search'] } })).toEqual(
      [expect.objectContaining({ id: 'l000777' })],
    );
  });
});

describe("PostgreSQL store: a wallet's history pages its index in order", () => {
  let db: TestDatabase;
  let store: PostgresStore;
  const ASSET = 'ethereum:testnet:USDC';
  /** 40,000 transfers from wal_a to wal_b, one a millisecond: each wallet has a side of every one */
  const N = 40_000;
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  const transfer = (i: number): LedgerTransfer => {
    const at = new Date(t0 + i).toISOString();
    const t: LedgerTransfer = {
      id: `tr_${String(i).padStart(6, '0')}`,
      debit_account: walletAccount('wal_a', ASSET),
      credit_account: walletAccount('wal_b', ASSET),
      asset: ASSET,
      amount: '1',
      kind: 'transfer',
      two_phase: false,
      status: 'posted',
      created_at: at,
      posted_at: at,
      wtx_format: WTX_FORMAT,
      debit_wallet_id: 'wal_a',
      credit_wallet_id: 'wal_b',
      version: 1,
    };
    t.history_key = historyKey(t);
    return t;
  };
  beforeAll(async () => {
    db = await freshDatabase('pghistory');
    store = await new PostgresStore(db.url).connect();
    await store.ensure(COLLECTIONS);
    for (let from = 0; from < N; from += 10_000) {
      const docs = Array.from({ length: 10_000 }, (_, k) => transfer(from + k));
      await sql(
        db.url,
        `INSERT INTO ledger_transfers (id, version, data) SELECT d->>'id', 1, d FROM jsonb_array_elements($1::jsonb) AS d`,
        [JSON.stringify(docs)],
      );
    }
    await sql(db.url, 'VACUUM ANALYZE ledger_transfers');
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  /** the finds a history page runs on the transfers, and for each the scans that ran with the rows they read */
  async function page(wallet: string, before: string | undefined) {
    const finds: Array<{ filter: Filter; opts: FindOptions }> = [];
    const watched = new Proxy(store, {
      get(target, name) {
        if (name !== 'find') return Reflect.get(target, name);
        return (coll: string, filter: Filter, opts: FindOptions) => {
          if (coll === TRANSFERS) finds.push({ filter, opts });
          return target.find(coll, filter, opts);
        };
      },
    });
    const rows = await walletHistory(watched, wallet, before, 21);
    const scans: string[] = [];
    for (const f of finds) {
      const q = new Statements(postgres).find(TRANSFERS, f.filter, f.opts, undefined);
      const [row] = await sql<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        db.url,
        `EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) ${postgres.numbered(q.sql)}`,
        q.params,
      );
      const walk = (n: PlanNode) => {
        if (n['Actual Loops'] > 0 && (n['Index Name'] || n['Node Type'] === 'Seq Scan'))
          scans.push(`${n['Node Type']} ${n['Scan Direction'] ?? ''} ${n['Index Name'] ?? ''} ${n['Actual Rows']}`.replace(/ +/g, ' '));
        n.Plans?.forEach(walk);
      };
      walk(row['QUERY PLAN'][0].Plan);
    }
    return { rows, scans };
  }

  it('reads a page of the newest, and the next, from the side index in its order, not every transfer of the wallet', async () => {
    const first = await page('wal_a', undefined);
    expect(first.rows.map((r) => r.transfer_id)).toEqual(Array.from({ length: 21 }, (_, k) => transfer(N - 1 - k).id));
    const next = await page('wal_a', first.rows[19].sort_key);
    expect(next.rows.map((r) => r.transfer_id)).toEqual(Array.from({ length: 21 }, (_, k) => transfer(N - 21 - k).id));
    const credited = await page('wal_b', undefined);
    expect(credited.rows[0]).toMatchObject({ transfer_id: transfer(N - 1).id, side: 'credit', wallet_id: 'wal_b' });
    // each side's find walks its own index backwards and stops after the page (+1 and the cursor's transfer)
    for (const [scans, side] of [
      [first.scans, 'debit'],
      [next.scans, 'debit'],
      [credited.scans, 'credit'],
    ] as const) {
      const own = scans.find((s) => s.includes(`ledger_transfers__${side}_wallet_id__history_key__p`));
      expect(own).toMatch(/^Index (Only )?Scan Backward /);
      expect(Number(own!.split(' ').pop())).toBeLessThanOrEqual(23);
      for (const s of scans) expect(s).not.toMatch(/^Seq Scan/);
    }
  });
});

describe('PostgreSQL store: a server started by the test, crashed and restarted', () => {
  let server: PgServer;
  let db: TestDatabase;
  beforeAll(async () => {
    server = await startPostgresServer();
    db = await freshDatabase('pgcrash', server);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('fails operations with a retryable StoreUnavailableError while the server is down, commits whole writes or none, and reconnects', async () => {
    const lines: string[] = [];
    const store: Store = await new PostgresStore(db.url, { log: (l) => lines.push(l) }).connect();
    try {
      await store.ensure([{ name: 'items' }]);
      // writes of two rows each, in flight when the server dies
      const inFlight = Array.from({ length: 40 }, (_, i) =>
        store
          .write([
            { op: 'insert', coll: 'items', doc: { id: `a${i}` } },
            { op: 'insert', coll: 'items', doc: { id: `b${i}` } },
          ])
          .then(
            () => 'ok',
            (e) => e,
          ),
      );
      const restarted = server.restart!(1500);
      const outcomes = await Promise.all(inFlight);
      for (const o of outcomes) if (o !== 'ok') expect(o).toBeInstanceOf(StoreUnavailableError);
      const during = await store.get('items', 'a0').catch((e) => e);
      await restarted;
      // unavailable while down: a 503 that says so, retryable
      if (during instanceof Error)
        expect([during.constructor, (during as StoreUnavailableError).code]).toEqual([StoreUnavailableError, 503]);
      await eventually(
        'the store to reconnect',
        async () =>
          await store.get('items', 'nope').then(
            () => true,
            () => false,
          ),
        20_000,
        100,
      );
      expect(lines.some((l) => /connection lost/.test(l))).toBe(true);
      expect(lines.some((l) => /connection back/.test(l))).toBe(true);
      // never half a write
      for (let i = 0; i < 40; i++) {
        const [a, b] = await Promise.all([store.get('items', `a${i}`), store.get('items', `b${i}`)]);
        expect([i, a === null, b === null]).toEqual([i, a === null, a === null]);
      }
    } finally {
      await store.close();
    }
  }, 60_000);

  it('a node answers 503 in the error envelope while its store is down, stays up, and serves again once it is back', async () => {
    const node = await startTestNode({ STORE_URL: db.url });
    try {
      expect((await node.request('GET', '/v1/payment_methods')).status).toBe(200);
      const key = (await node.request('POST', '/v1/payment_sessions/demo', { body: {} })).status;
      expect(key).toBeLessThan(500);
      const restarted = server.restart!(2000);
      await new Promise((r) => setTimeout(r, 300));
      const down = await node.request('POST', '/v1/payment_sessions/demo', { body: {} });
      expect(down.status).toBe(503);
      expect(down.body).toEqual({
        code: 1,
        message: expect.stringMatching(/retry/),
        remediation: expect.any(String),
        request_id: down.headers.get('x-request-id'),
        retryable: true,
      });
      await restarted;
      await eventually(
        'the node to serve writes again',
        async () => (await node.request('POST', '/v1/payment_sessions/demo', { body: {} })).status < 500,
        20_000,
        200,
      );
    } finally {
      await node.stop();
    }
  }, 60_000);
});
