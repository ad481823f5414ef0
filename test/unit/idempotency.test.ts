/** Idempotency.run against a real (in-memory SQLite) store: races between requests with one key. */
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { VersionConflictError } from '../../lib/store/port.ts';
import { Idempotency, type IdempotencyRequest } from '../../lib/core/idempotency.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import { Keyring, openWith } from '../../lib/core/keyring.ts';
import { createHash, randomBytes } from 'node:crypto';

describe('Idempotency.run', () => {
  let store: SqliteStore;
  let idem: Idempotency;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.ensure(COLLECTIONS);
    idem = new Idempotency(store);
  });
  afterEach(() => store.close());

  const req = (payload: unknown): IdempotencyRequest => ({ scope: 'test', key: 'k-1', payload, now: new Date() });
  const winner = (r: IdempotencyRequest) =>
    idem.run(r, async () => {
      await store.write([{ op: 'insert', coll: 'merchants', doc: { id: 'mer_a' } }, idem.record(r, { id: 'mer_a' })]);
      return { id: 'mer_a' };
    });

  it('replays the winner when the loser lost a compare-and-set race on what both meant to change', async () => {
    const r = req({ name: 'A' });
    // the loser found no record, then the winner committed, then the loser's write lost a race
    const loser = idem.run(r, async () => {
      await winner(r);
      throw new VersionConflictError('registration_intents', 'ri_1');
    });
    await expect(loser).resolves.toEqual({ id: 'mer_a' });
  });

  it('still answers 409 for another payload after such a race, and rethrows a race when nothing was recorded', async () => {
    const other = idem.run(req({ name: 'B' }), async () => {
      await winner(req({ name: 'A' }));
      throw new VersionConflictError('registration_intents', 'ri_1');
    });
    await expect(other).rejects.toMatchObject({ code: 409, message: 'idempotency key was already used with a different payload' });
    const bare = new Idempotency(store).run({ ...req({ name: 'C' }), key: 'k-2' }, async () => {
      throw new VersionConflictError('x', 'y');
    });
    await expect(bare).rejects.toBeInstanceOf(VersionConflictError);
  });

  it('seals a response with secrets under the master key and the idempotency key: a copy of the store and a guessed key are not enough', async () => {
    const keyring = new Keyring(randomBytes(32));
    const sealing = new Idempotency(store, keyring);
    const r: IdempotencyRequest = { scope: 'register', key: 'order-1', payload: { name: 'A' }, now: new Date(), seal: true };
    const secret = { api_key: 'service_sk_test_SECRETSECRETSECRETSECRET' };
    await store.write([sealing.record(r, secret)]);
    const [doc] = await store.find<{ id: string; sealed_response: string }>('idempotency', {});
    expect(JSON.stringify(doc)).not.toContain('SECRET');
    // the attacker's tries: the key derived from the idempotency key alone (the old scheme), another master key
    expect(() => openWith(createHash('sha256').update('idempotency-seal:order-1').digest(), doc.sealed_response)).toThrow();
    await expect(new Idempotency(store, new Keyring(randomBytes(32))).replay(r)).rejects.toThrow();
    await expect(sealing.replay(r)).resolves.toEqual(secret);
  });
});
