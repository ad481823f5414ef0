/**
 * lib/core/due-scanner.ts on a real SQLite store: only due rows are claimed, each once per lease, in
 * batches until drained; a failed row comes back after its lease; two scanners (two nodes) never hand
 * out one row twice; the overlap guard keeps one scan at a time; room bounds the claim; stop waits.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, type Doc, type Store } from '../../lib/store/index.ts';
import { DueScanner, type DueScannerOptions } from '../../lib/core/due-scanner.ts';
import { tempDir } from '../helpers/node.ts';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const COLL = 'test_reminders';

describe('due scanner', () => {
  let dir: string;
  let store: Store;
  let now: number;
  let seq = 0;

  beforeEach(async () => {
    dir = tempDir();
    store = await openStore(`sqlite:${join(dir, 'store.db')}`);
    await store.ensure([{ name: COLL, indexes: [{ fields: ['state', 'due_at'] }] }]);
    now = T0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const at = (ms: number) => new Date(ms).toISOString();
  async function seed(n: number, dueAt: number, state = 'open') {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = `r${String(++seq).padStart(6, '0')}`;
      await store.write([{ op: 'insert', coll: COLL, doc: { id, state, due_at: at(dueAt) } }]);
      ids.push(id);
    }
    return ids;
  }
  const scanner = (handle: DueScannerOptions<Doc>['handle'], o: Partial<DueScannerOptions<Doc>> = {}) =>
    new DueScanner<Doc>({
      name: 'test',
      store,
      coll: COLL,
      dueField: 'due_at',
      filter: { state: 'open' },
      leaseMs: 60_000,
      intervalMs: 3_600_000,
      now: () => new Date(now),
      handle,
      log: { warn: () => undefined },
      ...o,
    });

  it('claims only due rows matching the filter, in batches until drained, each once per lease', async () => {
    const due = await seed(7, T0 - 1000);
    await seed(2, T0 + 10_000); // not due yet
    await seed(2, T0 - 1000, 'closed'); // filtered out
    const seen: string[] = [];
    const s = scanner(
      async (row) => {
        seen.push(row.id);
      },
      { batch: 3 },
    );
    expect(await s.scanOnce()).toBe(7);
    expect(seen.sort()).toEqual([...due].sort());
    expect(await s.scanOnce()).toBe(0); // leased
    now = T0 + 61_000; // the lease ran out and the two later rows came due
    expect(await s.scanOnce()).toBe(9);
  });

  it('a failed row comes back after its lease; the others are not held up', async () => {
    const [bad, good] = await seed(2, T0 - 1);
    const calls: string[] = [];
    const s = scanner(async (row) => {
      calls.push(row.id);
      if (row.id === bad) throw new Error('receiver down');
    });
    expect(await s.scanOnce()).toBe(2);
    expect(calls.sort()).toEqual([bad, good].sort());
    expect(await s.scanOnce()).toBe(0);
    now = T0 + 60_001;
    calls.length = 0;
    expect(await s.scanOnce()).toBe(2); // nothing marked them done in this test: both come back
  });

  it('two scanners on one store never hand out the same row within a lease', async () => {
    await seed(40, T0 - 1);
    const handled = new Map<string, number>();
    const handle = async (row: Doc) => {
      handled.set(row.id, (handled.get(row.id) ?? 0) + 1);
      await new Promise((r) => setImmediate(r));
    };
    const a = scanner(handle, { batch: 5, parallel: 2 });
    const b = scanner(handle, { batch: 5, parallel: 2 });
    const [na, nb] = await Promise.all([a.scanOnce(), b.scanOnce()]);
    expect(na + nb).toBe(40);
    expect(handled.size).toBe(40);
    expect([...handled.values()].every((n) => n === 1)).toBe(true);
  });

  it('the overlap guard keeps one scan at a time; scanOnce during a scan waits and scans again', async () => {
    await seed(3, T0 - 1);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let active = 0;
    let maxActive = 0;
    const s = scanner(
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await gate;
        active--;
      },
      { parallel: 1 },
    );
    const first = s.scanOnce();
    const second = s.scanOnce();
    expect(s.isRunning).toBe(true);
    release();
    expect(await first).toBe(3);
    expect(await second).toBe(0);
    expect(maxActive).toBe(1);
  });

  it('room bounds the claim and drain: false claims one batch', async () => {
    await seed(5, T0 - 1);
    let room = 2;
    const s = scanner(async () => undefined, { room: () => room, drain: false });
    expect(await s.scanOnce()).toBe(2);
    room = 0;
    expect(await s.scanOnce()).toBe(0);
    room = 10;
    expect(await s.scanOnce()).toBe(3);
  });

  it('the interval scans by itself; stop waits for the running scan and then nothing is claimed', async () => {
    await seed(2, T0 - 1);
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const s = scanner(
      async (row) => {
        seen.push(row.id);
        await gate;
      },
      { intervalMs: 5 },
    );
    s.start();
    while (seen.length < 2) await new Promise((r) => setTimeout(r, 5));
    let stopped = false;
    const stopping = s.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false); // still waiting for the handlers
    release();
    await stopping;
    await seed(1, T0 - 1);
    expect(await s.scanOnce()).toBe(0);
    s.start();
    expect(await s.scanOnce()).toBe(1);
    await s.stop();
  });
});
