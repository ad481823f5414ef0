/**
 * Indexes no read needs are gone (migrations 5 and 6): a store migrated before them loses them on its next start,
 * on SQLite and PostgreSQL; an owner's ledger accounts are found by their ids' prefix (ownerIds), every
 * one of them and no neighbour's, on every adapter.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { openStore } from '../../lib/store/index.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import { FULL_EXPIRY_INDEXES } from '../../lib/store/sql/migrations.ts';
import { ACCOUNTS, ownerIds, walletAccount, accountId, newAccount } from '../../lib/ledger/index.ts';
import { balances } from '../../lib/ledger/balances.ts';
import { storeAdapters } from '../helpers/store-adapters.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * every collection's expiry field has a partial index (…__p); the collections that existed before migration 7
 * had a full one, which it drops (a collection added since never had one)
 */
const EXPIRING = COLLECTIONS.filter((c) => c.expiresField).map((c) => ({ coll: c.name, full: `${c.name}__${c.expiresField}` }));
const OLD_EXPIRING = EXPIRING.filter((e) => FULL_EXPIRY_INDEXES.includes(e.full));
const GONE = [
  'ledger_accounts__owner',
  'spend_attempts__merchant_id__id',
  'x402_redemptions__status__next_check_at',
  'payment_sessions__merchant_id__created_at',
  'payment_sessions__expiry_due_at',
  ...OLD_EXPIRING.map((e) => e.full),
];
/** what a store before migration 5 had: the old indexes, and no record of the migrations */
const OLD = [
  `CREATE INDEX "ledger_accounts__owner" ON "ledger_accounts" (id)`,
  `CREATE INDEX "spend_attempts__merchant_id__id" ON "spend_attempts" (id)`,
  `CREATE INDEX "x402_redemptions__status__next_check_at" ON "x402_redemptions" (id)`,
  `CREATE INDEX "payment_sessions__merchant_id__created_at" ON "payment_sessions" (id)`,
  `CREATE INDEX "payment_sessions__expiry_due_at" ON "payment_sessions" (id)`,
  ...OLD_EXPIRING.map((e) => `CREATE INDEX "${e.full}" ON "${e.coll}" (id)`),
  'DELETE FROM _schema_migrations WHERE version >= 5',
];

describe('indexes no read needs', () => {
  it('SQLite: a store migrated before loses them on its next start, and redemptions due get a partial index', async () => {
    const dir = tempDir('unread-');
    const file = join(dir, 'service.db');
    try {
      // every full index migration 7 drops is an expiring collection's (none named wrong)
      expect(OLD_EXPIRING).toHaveLength(FULL_EXPIRY_INDEXES.length);
      await (await openStore(`sqlite:${file}`)).close();
      const raw = new DatabaseSync(file);
      for (const text of OLD) raw.exec(text);
      const names = () =>
        (raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as Array<{ name: string }>).map((r) => r.name);
      expect(names()).toEqual(expect.arrayContaining(GONE));
      await (await openStore(`sqlite:${file}`)).close();
      expect(names().filter((n) => GONE.includes(n))).toEqual([]);
      expect(names()).toEqual(
        expect.arrayContaining([
          'x402_redemptions__next_check_at__p',
          'spend_attempts__agent_wallet_id__id',
          ...EXPIRING.map((e) => `${e.full}__p`),
          'payment_sessions__expiry_due_at__p',
        ]),
      );
      raw.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL: a store migrated before loses them on its next start', async () => {
    const db = await freshDatabase('unread');
    const run = async (texts: string[]) => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const out: string[] = [];
        for (const t of texts) out.push(...(await c.query<{ indexname: string }>(t)).rows.map((r) => r.indexname));
        return out;
      } finally {
        await c.end();
      }
    };
    const names = () => run(["SELECT indexname FROM pg_indexes WHERE schemaname = 'public'"]);
    try {
      await (await openStore(db.url)).close();
      await run(OLD);
      expect(await names()).toEqual(expect.arrayContaining(GONE));
      await (await openStore(db.url)).close();
      expect((await names()).filter((n) => GONE.includes(n))).toEqual([]);
      expect(await names()).toEqual(expect.arrayContaining(['x402_redemptions__next_check_at__p', ...EXPIRING.map((e) => `${e.full}__p`)]));
    } finally {
      await db.drop();
    }
  });

  describe.each(storeAdapters('owner-ids'))('an owner’s accounts by their ids: $name', (adapter) => {
    it('finds every account of the owner and none of an owner whose id it begins', async () => {
      const store = await adapter.open();
      try {
        await store.ensure([{ name: ACCOUNTS }]);
        const now = new Date().toISOString();
        const W = 'wal_01aaaaaaaaaaaaaaaaaaaaaaaa';
        const owners = [W, `${W}.sim`, `${W}x`, 'wal_01aaaaaaaaaaaaaaaaaaaaaaab', 'sys:chain', 'sys:gas@0xabc', 'sysx'];
        const assets = ['ethereum:testnet:USDC', 'solana:devnet:SOL'];
        const ops = owners.flatMap((o) =>
          assets.map((a) => ({ op: 'insert' as const, coll: ACCOUNTS, doc: { ...newAccount(o, a, now), credits_posted: '5' } })),
        );
        await store.write(ops);
        const ids = async (owner: string) => (await store.find(ACCOUNTS, ownerIds(owner))).map((d) => d.id).sort();
        expect(await ids(W)).toEqual(assets.map((a) => walletAccount(W, a)).sort());
        expect(await ids(`${W}.sim`)).toEqual(assets.map((a) => walletAccount(W, a, true)).sort());
        // every system owner (`sys:…`), parked gas included, and nothing else
        expect(await ids('sys')).toEqual(['sys:chain', 'sys:gas@0xabc'].flatMap((o) => assets.map((a) => accountId(o, a))).sort());
        // a wallet's balances count its on-chain and simulated accounts, never a neighbour's
        const b = await balances(store, W);
        expect(Object.keys(b).sort()).toEqual([...assets].sort());
        for (const a of assets) expect(b[a]).toEqual({ available: 10n, pending: 0n, simulated_available: 5n });
      } finally {
        await store.close();
        await adapter.cleanup();
      }
    });
  });
});
