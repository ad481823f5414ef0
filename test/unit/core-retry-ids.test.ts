/** lib/core/retry.ts (the compare-and-set loop) on a real SQLite store, and lib/core/ids.ts's registry. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { openStore, VersionConflictError, type Doc, type Store } from '../../lib/store/index.ts';
import { retryOnConflict } from '../../lib/core/retry.ts';
import { ServiceError } from '../../lib/core/errors.ts';
import { ID_PREFIXES, idPrefix, isId, newId, type IdPrefix } from '../../lib/core/ids.ts';
import { tempDir } from '../helpers/node.ts';

describe('retryOnConflict', () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = tempDir();
    store = await openStore(`sqlite:${join(dir, 'store.db')}`);
    await store.ensure([{ name: 'test_counters' }]);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('concurrent read-modify-write steps all land exactly once', async () => {
    await store.write([{ op: 'insert', coll: 'test_counters', doc: { id: 'c', n: 0 } }]);
    const bump = () =>
      retryOnConflict(
        async () => {
          const doc = (await store.get<Doc & { n: number }>('test_counters', 'c'))!;
          await new Promise((r) => setImmediate(r)); // let the others read the same version
          await store.write([{ op: 'cas', coll: 'test_counters', doc: { ...doc, n: doc.n + 1 }, expected: doc.version! }]);
        },
        { attempts: 200 },
      );
    await Promise.all(Array.from({ length: 20 }, bump));
    expect((await store.get<Doc & { n: number }>('test_counters', 'c'))!.n).toBe(20);
  });

  it("other errors pass at once; a race lost every time is a 409 (or the caller's error)", async () => {
    let calls = 0;
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(calls).toBe(1);
    calls = 0;
    const lost = retryOnConflict(
      async () => {
        calls++;
        throw new VersionConflictError('x', 'y');
      },
      { attempts: 3, maxPauseMs: () => 0 },
    );
    await expect(lost).rejects.toBeInstanceOf(ServiceError);
    await expect(lost).rejects.toMatchObject({ code: 409 });
    expect(calls).toBe(3);
    await expect(
      retryOnConflict(
        async () => {
          throw new VersionConflictError('x', 'y');
        },
        { attempts: 2, maxPauseMs: () => 0, exhausted: () => new Error('mine') },
      ),
    ).rejects.toThrow('mine');
    let n = 0;
    expect(
      await retryOnConflict(
        async (attempt) => {
          n = attempt;
          if (attempt < 4) throw new Error('retry me');
          return 'ok';
        },
        { retryOn: (e) => (e as Error).message === 'retry me', maxPauseMs: () => 0 },
      ),
    ).toBe('ok');
    expect(n).toBe(4);
  });
});

describe('id registry', () => {
  const prefixes = Object.keys(ID_PREFIXES) as IdPrefix[];

  it('prefixes are unique short lowercase words, each naming one noun', () => {
    for (const p of prefixes) expect(p).toMatch(/^[a-z]{2,8}$/);
    expect(new Set(Object.values(ID_PREFIXES)).size).toBe(prefixes.length);
  });

  it('ids carry their registered prefix and sort by creation time', () => {
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), fc.integer({ min: 0, max: 2 ** 40 }), (prefix, ms) => {
        const a = newId(prefix, ms);
        const b = newId(prefix, ms + 1);
        expect(isId(a, prefix)).toBe(true);
        expect(idPrefix(a)).toBe(prefix);
        expect(a < b).toBe(true);
        for (const other of prefixes) if (other !== prefix) expect(isId(a, other)).toBe(false);
      }),
    );
    for (const bad of ['', 'ps_', 'ps_short', 'zz_0123456789abcdefghjkmnpqrs', 'PS_0123456789abcdefghjkmnpqrs'])
      expect(idPrefix(bad)).toBeNull();
  });

  it('ids of the same millisecond keep their order but are not guessable from each other (fresh randomness, no +1)', () => {
    const ms = Date.now() + 10_000_000;
    const ids = Array.from({ length: 200 }, () => newId('ps', ms));
    expect([...ids].sort()).toEqual(ids);
    const base32 = '0123456789abcdefghjkmnpqrstvwxyz';
    const tails = ids.map((id) => [...id.slice(-16)].reduce((n, c) => n * 32n + BigInt(base32.indexOf(c)), 0n));
    const steps = tails.slice(1).map((t, i) => t - tails[i]);
    expect(steps.every((d) => d > 0n)).toBe(true);
    expect(steps.filter((d) => d === 1n)).toHaveLength(0);
    expect(new Set(steps.map(String)).size).toBe(steps.length);
  });
});
