/**
 * Benchmark: catalog discovery at 100,000 products across 1,000 merchants, on SQLite (the embedded
 * default, a temporary DATA_DIR) and on PostgreSQL (a fresh database), `node index.ts` as a child process.
 *
 * 1. Seeds the catalog straight through the store in batches (one published store per merchant, 100
 *    published products each with one published plan and one published price, and the discovery
 *    listings), with deterministic pseudo-random names and descriptions.
 * 2. Measures GET /v1/catalog/products over HTTP, one request at a time (latency, not throughput):
 *    first pages, cursor paging deep into the list, filters, and `q` searches for common, less common,
 *    rare and absent words.
 * 3. For comparison, times the same rare-word searches directly on a copy of the listings without the
 *    text index (the plain LIKE scan), and a page's store reads in the process both ways: Store.findWith
 *    (on PostgreSQL two round trips) and the same reads as a sequence of finds (one round trip each).
 *
 * Usage: npx node scripts/bench-catalog.ts [--products 100000] [--merchants 1000] [--samples 200] [--store sqlite|postgres|both]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../lib/store/index.ts';
import type { Filter, FindOptions, Lookup, Store, WriteOp } from '../lib/store/port.ts';
import { findWithFinds } from '../lib/store/lookups.ts';
import { CatalogBuyer } from '../lib/catalog/buyer.ts';
import type { Runtime } from '../lib/runtime/index.ts';
import { newId } from '../lib/core/ids.ts';
import { listingOf } from '../lib/catalog/merchant.ts';
import type { PlanRow, PriceRow, ProductRow, StoreRow } from '../lib/catalog/model.ts';
import { arg, percentile, startServiceProcess } from './bench-lib.ts';
import pg from 'pg';
import { textSearchQuery } from '../lib/store/postgres.ts';
import { postgres } from '../lib/store/sql/dialect.ts';
import { freshDatabase } from '../test/helpers/postgres.ts';

const PRODUCTS = arg('products', 100_000);
const MERCHANTS = arg('merchants', 1000);
const SAMPLES = arg('samples', 200);
// --store sqlite | postgres | both (default): PostgreSQL on 127.0.0.1:5432, or one started for the run
const storeArg = process.argv.includes('--store') ? process.argv[process.argv.indexOf('--store') + 1] : 'both';
const STORES = (storeArg === 'both' ? ['sqlite', 'postgres'] : [storeArg]) as Array<'sqlite' | 'postgres'>;
const PER_MERCHANT = Math.ceil(PRODUCTS / MERCHANTS);

// deterministic pseudo-random text
let seed = 42;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const ADJ = [
  'Fast',
  'Secure',
  'Smart',
  'Cloud',
  'Mobile',
  'Open',
  'Global',
  'Instant',
  'Private',
  'Daily',
  'Pro',
  'Lite',
  'Ultra',
  'Green',
  'Silent',
  'Bright',
];
const NOUN = [
  'API',
  'Backup',
  'Newsletter',
  'Course',
  'Dataset',
  'Translator',
  'Storage',
  'Inference',
  'Hosting',
  'Podcast',
  'Analytics',
  'Scanner',
  'Search',
  'Gateway',
  'Monitor',
  'Mailbox',
  'Forecast',
  'Library',
  'Template',
  'Plugin',
];
const WORDS = (
  'access account agent answer archive audio batch browser budget build cache chart check client code compute content cost credit daily data ' +
  'deploy design device digital document domain download edge email engine event export feature file filter format forum guide image index ' +
  'insight invoice journal key label language layer learning license limit live local log market media member message metric model month ' +
  'network node note notify offline online order page panel partner payment photo plan platform policy portal price print priority project ' +
  'query queue quota rate record region report request research review route sandbox schedule schema score script seat secure server service ' +
  'session share signal site sms snapshot social source speech stream support sync team tenant test ticket token tool topic track traffic ' +
  'trial upload usage user video voice wallet watch web webhook widget workflow year zone'
).split(' ');
const COMMON = 'premium'; // about 10 % of products
const MEDIUM = 'quantum'; // about 1 %
const RARE = ['zanzibar', 'xylophone', 'marzipan']; // about 10 products each

function text(i: number): { name: string; description: string } {
  const words = Array.from({ length: 8 + Math.floor(rand() * 8) }, () => pick(WORDS));
  if (rand() < 0.1) words.splice(Math.floor(rand() * words.length), 0, COMMON);
  if (rand() < 0.01) words.splice(Math.floor(rand() * words.length), 0, MEDIUM);
  // each rare word in 10 products spread over the merchants
  if ((i * 7919) % PRODUCTS < 10) words.push(RARE[0]);
  if ((i * 104729) % PRODUCTS < 10) words.push(RARE[1]);
  if ((i * 1299709) % PRODUCTS < 10) words.unshift(RARE[2].toUpperCase());
  const d = words.join(' ');
  return { name: `${pick(ADJ)} ${pick(NOUN)} ${i}`, description: `${d[0].toUpperCase()}${d.slice(1)}.` };
}

async function analyze(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('VACUUM ANALYZE');
  await c.end();
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'CTE Name'?: string;
  'Actual Loops': number;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

/**
 * EXPLAIN ANALYZE of the PostgreSQL adapter's own text-search statement (textSearchQuery) per query class:
 * whether the window of the next rows answered or the second branch ran, and which index that branch read.
 */
async function explain(url: string, merchant: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const out: Array<{ what: string; path: string; ms: number; plan: string }> = [];
  const classes: Array<[string, string, Filter]> = [
    ['common word', COMMON, {}],
    ['less common word (~1 %)', MEDIUM, {}],
    ['prefix of a word', MEDIUM.slice(0, 5), {}],
    ['rare word', RARE[0], {}],
    ['prefix of a rare word', RARE[1].slice(0, 5), {}],
    ['absent word', 'nonexistent517', {}],
    ['exact product name', String(Math.floor(PRODUCTS / 2) + 17), {}],
    ['rare word + sandbox=false', RARE[2], { sandbox: false }],
    ['word + merchant_id', 'zone', { merchant_id: merchant }],
  ];
  for (const [what, q, filter] of classes) {
    const query = textSearchQuery('catalog_listings', ['search'], filter, { desc: true, limit: 21, text: { q, fields: ['search'] } });
    const text = postgres.numbered(query.sql);
    await c.query(text, query.params); // warm, as the measured requests were
    const json = (await c.query(`EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) ${text}`, query.params)).rows[0]['QUERY PLAN'][0];
    const plan = (await c.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${text}`, query.params)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    // the scans of the table that ran: the window's walk of the primary key, or the second branch's access
    const ran: string[] = [];
    const walk = (n: PlanNode) => {
      if (n['Actual Loops'] > 0 && n['Index Name']) ran.push(`${n['Node Type']} on ${n['Index Name']} (${n['Actual Rows']} rows)`);
      if (n['Actual Loops'] > 0 && n['Node Type'] === 'Seq Scan') ran.push(`Seq Scan (${n['Actual Rows']} rows)`);
      n.Plans?.forEach(walk);
    };
    walk(json.Plan);
    out.push({ what: `${what} ("${q}")`, path: ran.join(' → '), ms: json['Execution Time'], plan });
  }
  await c.end();
  return out;
}

async function bench(kind: 'sqlite' | 'postgres') {
  // -------------------------------------------------------------------------------------------------
  // seed

  seed = 42; // the same catalog on every store
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-catalog-'));
  const pgDb = kind === 'postgres' ? await freshDatabase('bench_catalog') : null;
  const storeUrl = pgDb ? pgDb.url : `sqlite:${join(dataDir, 'service.db')}`;
  const store = await openStore(storeUrl);
  await store.ensure([{ name: 'bench_plain_listings', indexes: [{ fields: ['merchant_id', 'id'] }, { fields: ['sandbox', 'id'] }] }]);
  const at = new Date().toISOString();
  const merchants: Array<{ id: string; sandbox: boolean }> = [];
  const t0 = performance.now();
  let n = 0;
  for (let mi = 0; mi < MERCHANTS && n < PRODUCTS; mi++) {
    const merchant = { id: newId('mer'), sandbox: mi % 10 < 7 };
    merchants.push(merchant);
    const base = {
      merchant_id: merchant.id,
      sandbox: merchant.sandbox,
      status: 'published' as const,
      created_at: at,
      updated_at: at,
      published_at: at,
      archived_at: null,
    };
    const shop: StoreRow = { id: newId('store'), ...base, name: `Shop ${mi}`, slug: `shop-${mi}`, description: null };
    const ops: WriteOp[] = [
      {
        op: 'insert',
        coll: 'merchants',
        doc: { id: merchant.id, name: `Merchant ${mi}`, sandbox: merchant.sandbox, created_at: at, rate_limit_per_minute: 60 },
      },
      { op: 'insert', coll: 'catalog_stores', doc: shop },
    ];
    for (let k = 0; k < PER_MERCHANT && n < PRODUCTS; k++, n++) {
      const v = { version_no: 1, supersedes_id: null, checkout_referenced: false };
      const pid = newId('prod');
      const product: ProductRow = {
        id: pid,
        ...base,
        ...v,
        lineage_id: pid,
        store_id: shop.id,
        ...text(n),
        slug: null,
        fulfillment_type: 'subscription',
      };
      const plid = newId('plan');
      const plan: PlanRow = {
        id: plid,
        ...base,
        ...v,
        lineage_id: plid,
        store_id: shop.id,
        product_id: pid,
        product_lineage_id: pid,
        name: 'Monthly',
        slug: 'monthly',
        entitlement: { seats: 5 },
      };
      const prid = newId('price');
      const price: PriceRow = {
        id: prid,
        ...base,
        ...v,
        lineage_id: prid,
        store_id: shop.id,
        plan_id: plid,
        plan_lineage_id: plid,
        product_lineage_id: pid,
        amount_subunits: String(1_000_000 + (n % 100) * 10_000),
        currency_or_token: 'USDC',
        allowed_payment_methods: null,
        decimals: 6,
      };
      const listing = listingOf(product);
      ops.push(
        { op: 'insert', coll: 'catalog_products', doc: product },
        { op: 'insert', coll: 'catalog_plans', doc: plan },
        { op: 'insert', coll: 'catalog_prices', doc: price },
        { op: 'insert', coll: 'catalog_listings', doc: listing },
        { op: 'insert', coll: 'bench_plain_listings', doc: { ...listing } },
      );
    }
    await store.write(ops);
  }
  const seedSeconds = (performance.now() - t0) / 1000;
  // a bulk load is followed by autovacuum (statistics, the visibility map, the GIN index's pending list
  // merged) within a minute or two; run it now, so that it does not run in the middle of the measurements
  if (pgDb) await analyze(pgDb.url);

  // the plain LIKE scan, without the text index, straight on the store (the comparison)
  const plain: Record<string, number[]> = {};
  for (const [label, q] of [
    ['rare word', RARE[0]],
    ['absent word', 'nonexistentword'],
  ] as const) {
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = performance.now();
      await store.find('bench_plain_listings', {}, { desc: true, limit: 21, text: { q, fields: ['search'] } });
      times.push(performance.now() - s);
    }
    plain[label] = times.sort((a, b) => a - b);
  }
  // the store's reads of one page, in the process (no HTTP), the two ways alternately: findWith as the
  // adapter answers it (PostgreSQL: the search, then one statement for the products, stores, plans and
  // prices) and the same reads as a sequence of finds (one round trip each, as pages were read before)
  const reads: Record<string, { one: number[]; seq: number[] }> = {};
  {
    const asFinds = Object.assign(Object.create(store) as Store, {
      findWith: (c: string, f: Filter, o: FindOptions, l: Lookup[]) => findWithFinds(store, c, f, o, l),
    });
    const one = new CatalogBuyer({ store } as unknown as Runtime);
    const seq = new CatalogBuyer({ store: asFinds } as unknown as Runtime);
    const kinds: Array<[string, () => Record<string, string>]> = [
      ['first page (limit 20)', () => ({})],
      [`q rare word`, () => ({ q: pick(RARE) })],
      [`q less common word ("${MEDIUM}", ~1 %)`, () => ({ q: MEDIUM })],
      ['q exact product name', () => ({ q: String(100 + Math.floor(rand() * Math.max(1, PRODUCTS - 100))) })],
      ['q + merchant_id', () => ({ q: pick(WORDS), merchant_id: pick(merchants).id })],
    ];
    for (const [what, query] of kinds) {
      const t = (reads[what] = { one: [] as number[], seq: [] as number[] });
      for (let i = 0; i < SAMPLES + 10; i++) {
        for (const way of i % 2 ? (['one', 'seq'] as const) : (['seq', 'one'] as const)) {
          const s = performance.now();
          await (way === 'one' ? one : seq).products(query());
          if (i >= 10) t[way].push(performance.now() - s);
        }
      }
      t.one.sort((a, b) => a - b);
      t.seq.sort((a, b) => a - b);
    }
  }
  await store.close();
  console.log(
    `seeded ${n} products (+ ${n} plans, ${n} prices, ${n} listings) for ${merchants.length} merchants in ${seedSeconds.toFixed(1)} s`,
  );

  // -------------------------------------------------------------------------------------------------
  // measure over HTTP

  const svc = await startServiceProcess({ DATA_DIR: dataDir, STORE_URL: storeUrl });
  const get = async (path: string) => {
    const s = performance.now();
    const res = await fetch(svc.url + path);
    const body = (await res.json()) as { data: Array<{ id: string }>; next_cursor: string | null };
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - s, body };
  };
  const rows: Array<{ what: string; p50: number; p95: number; results: string }> = [];
  async function measure(what: string, path: () => string) {
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < 5; i++) await get(path()); // warm up
    for (let i = 0; i < SAMPLES; i++) {
      const r = await get(path());
      times.push(r.ms);
      found += r.body.data.length;
    }
    times.sort((a, b) => a - b);
    rows.push({ what, p50: percentile(times, 50), p95: percentile(times, 95), results: (found / SAMPLES).toFixed(1) });
  }
  const someMerchant = () => pick(merchants).id;

  await measure('first page, no filter (limit 20)', () => '/v1/catalog/products');
  await measure('first page, limit 100', () => '/v1/catalog/products?limit=100');
  await measure('first page of one merchant', () => `/v1/catalog/products?merchant_id=${someMerchant()}`);
  await measure('first page, sandbox=false', () => '/v1/catalog/products?sandbox=false');
  {
    // cursor paging deep into the list: every request is the next page of a walk
    const times: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    while (pages < Math.max(SAMPLES, 250)) {
      const r = await get(`/v1/catalog/products?limit=20${cursor ? `&cursor=${cursor}` : ''}`);
      times.push(r.ms);
      pages++;
      cursor = r.body.next_cursor;
      if (!cursor) break;
    }
    times.sort((a, b) => a - b);
    rows.push({
      what: `cursor paging, pages 1 to ${pages} (limit 20)`,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      results: '20',
    });
  }
  await measure(`q common word ("${COMMON}", ~10 % of products)`, () => `/v1/catalog/products?q=${COMMON}`);
  await measure(`q word in ~6 % of products (random vocabulary word)`, () => `/v1/catalog/products?q=${pick(WORDS)}`);
  await measure(`q less common word ("${MEDIUM}", ~1 %)`, () => `/v1/catalog/products?q=${MEDIUM}`);
  await measure(`q prefix of a word ("${MEDIUM.slice(0, 5)}", ~1 %)`, () => `/v1/catalog/products?q=${MEDIUM.slice(0, 5)}`);
  await measure('q rare word (~10 products)', () => `/v1/catalog/products?q=${pick(RARE)}`);
  await measure('q prefix of a rare word (5 letters)', () => `/v1/catalog/products?q=${pick(RARE).slice(0, 5)}`);
  await measure('q absent word', () => `/v1/catalog/products?q=nonexistent${Math.floor(rand() * 1000)}`);
  // a product's number, of 3 digits at least: the service trims q, and a shorter term needs a merchant_id
  await measure(
    'q exact product name ("… <number>")',
    () => `/v1/catalog/products?q=${100 + Math.floor(rand() * Math.max(1, PRODUCTS - 100))}`,
  );
  await measure('q two letters ("zq", absent) + merchant_id', () => `/v1/catalog/products?merchant_id=${someMerchant()}&q=zq`);
  await measure('q + merchant_id', () => `/v1/catalog/products?merchant_id=${someMerchant()}&q=${pick(WORDS)}`);
  await measure('q + sandbox=false, rare word', () => `/v1/catalog/products?sandbox=false&q=${pick(RARE)}`);
  {
    const times: number[] = [];
    let cursor: string | null = null;
    let total = 0;
    do {
      const r = await get(`/v1/catalog/products?q=${MEDIUM}&limit=20${cursor ? `&cursor=${cursor}` : ''}`);
      times.push(r.ms);
      total += r.body.data.length;
      cursor = r.body.next_cursor;
    } while (cursor);
    times.sort((a, b) => a - b);
    rows.push({
      what: `q "${MEDIUM}" paged to the end (${total} results, ${times.length} pages)`,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      results: '20',
    });
  }
  await svc.stop();
  const plans = pgDb ? await explain(pgDb.url, merchants[0].id) : [];
  rmSync(dataDir, { recursive: true, force: true });
  await pgDb?.drop();
  return { rows, plain, plans, reads };
}

const results: Record<string, Awaited<ReturnType<typeof bench>>> = {};
for (const kind of STORES) results[kind] = await bench(kind);
const first = results[STORES[0]];
console.log(
  `\n| discovery request (over HTTP, one at a time) | ${STORES.map((k) => `${k} p50 ms | ${k} p95 ms`).join(' | ')} | products per page |`,
);
console.log(`|---|${STORES.map(() => '---|---|').join('')}---|`);
first.rows.forEach((r, i) =>
  console.log(
    `| ${r.what} | ${STORES.map((k) => `${results[k].rows[i].p50.toFixed(1)} | ${results[k].rows[i].p95.toFixed(1)}`).join(' | ')} | ${r.results} |`,
  ),
);
console.log(
  `\n| without the text index (plain LIKE scan in the store, no HTTP) | ${STORES.map((k) => `${k} p50 ms | ${k} p95 ms`).join(' | ')} |`,
);
console.log(`|---|${STORES.map(() => '---|---|').join('')}`);
for (const label of Object.keys(first.plain))
  console.log(
    `| ${label} | ${STORES.map((k) => `${percentile(results[k].plain[label], 50).toFixed(1)} | ${percentile(results[k].plain[label], 95).toFixed(1)}`).join(' | ')} |`,
  );
console.log(
  `\n| the store's reads of one page (in the process, no HTTP) | ${STORES.map((k) => `${k} findWith p50 / p95 ms | ${k} as separate finds p50 / p95 ms`).join(' | ')} |`,
);
console.log(`|---|${STORES.map(() => '---|---|').join('')}`);
for (const what of Object.keys(first.reads))
  console.log(
    `| ${what} | ${STORES.map((k) => {
      const r = results[k].reads[what];
      return `${percentile(r.one, 50).toFixed(2)} / ${percentile(r.one, 95).toFixed(2)} | ${percentile(r.seq, 50).toFixed(2)} / ${percentile(r.seq, 95).toFixed(2)}`;
    }).join(' | ')} |`,
  );
if (results.postgres) {
  console.log("\n| PostgreSQL text search, EXPLAIN ANALYZE of the store's statement | scans that ran | execution ms |");
  console.log('|---|---|---|');
  for (const p of results.postgres.plans) console.log(`| ${p.what} | ${p.path} | ${p.ms.toFixed(2)} |`);
  console.log(`\nplan of the rare-word search:\n${results.postgres.plans.find((p) => p.what.startsWith('rare word'))!.plan}`);
}
process.exit(0);
