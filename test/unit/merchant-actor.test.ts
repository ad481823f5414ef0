/** The merchant actor's decisions, without a broker. */
import { decideMerchant, liveSecrets, type MerchantState } from '../../lib/merchants/merchant.ts';

const now = new Date('2026-06-01T12:00:00Z');
const later = (ms: number) => new Date(now.getTime() + ms);

function merchant(): MerchantState {
  return {
    id: 'mer_1',
    version: 1,
    name: 'Shop',
    email: 'a@b.example',
    sandbox: true,
    webhook_url: null,
    rate_limit_per_minute: 60,
    kyc_status: 'none',
    owner_user_id: null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    active_key_id: 'k1',
    active_key_prefix: 'service_sk_test_aaaa',
    previous_key_id: null,
    previous_api_key_expires_at: null,
    webhook_secrets: [{ sealed: 's1', created_at: now.toISOString(), expires_at: null }],
  };
}

describe('merchant actor', () => {
  it('rotates the API key: the active key becomes the previous one until the overlap ends', () => {
    const d = decideMerchant(
      merchant(),
      { type: 'rotate_api_key', new_key_id: 'k2', new_key_prefix: 'p2', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
      now,
    );
    expect(d.state).toMatchObject({ active_key_id: 'k2', previous_key_id: 'k1', previous_api_key_expires_at: later(1000).toISOString() });
    expect(d.effects).toEqual([
      {
        op: 'upsert',
        coll: 'api_keys',
        doc: expect.objectContaining({ id: 'k1', kind: 'previous', expires_at: later(1000).toISOString() }),
      },
      { op: 'insert', coll: 'api_keys', doc: expect.objectContaining({ id: 'k2', kind: 'active', expires_at: null }) },
      // the audit row commits with the change; no part of a key is in it
      { op: 'insert', coll: 'audit_events', doc: expect.objectContaining({ type: 'merchant.api_key.rotated', merchant_id: 'mer_1' }) },
    ]);
  });

  it('keeps at most one previous key', () => {
    const first = decideMerchant(
      merchant(),
      { type: 'rotate_api_key', new_key_id: 'k2', new_key_prefix: 'p2', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
      now,
    ).state!;
    const second = decideMerchant(
      first,
      { type: 'rotate_api_key', new_key_id: 'k3', new_key_prefix: 'p3', overlap_until: later(2000).toISOString(), by_key_id: 'k2' },
      now,
    );
    expect(second.effects![0]).toEqual({ op: 'delete', coll: 'api_keys', id: 'k1' });
    expect(second.state).toMatchObject({ active_key_id: 'k3', previous_key_id: 'k2' });
  });

  it('revokes the previous key, and says so only when one was live', () => {
    const rotated = decideMerchant(
      merchant(),
      { type: 'rotate_api_key', new_key_id: 'k2', new_key_prefix: 'p2', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
      now,
    ).state!;
    const revoked = decideMerchant(rotated, { type: 'revoke_previous', credential: 'api_key', by_key_id: 'k2' }, now);
    expect(revoked.reply.revoked).toBe(true);
    expect(revoked.effects).toEqual([
      { op: 'delete', coll: 'api_keys', id: 'k1' },
      {
        op: 'insert',
        coll: 'audit_events',
        doc: expect.objectContaining({ type: 'merchant.credential.revoked', credential: 'api_key', revoked: true }),
      },
    ]);
    expect(revoked.state).toMatchObject({ previous_key_id: null, previous_api_key_expires_at: null, active_key_id: 'k2' });
    expect(decideMerchant(revoked.state!, { type: 'revoke_previous', credential: 'api_key', by_key_id: 'k2' }, now).reply.revoked).toBe(
      false,
    );
  });

  it('rotates the webhook secret with an overlap and revokes it', () => {
    const rotated = decideMerchant(
      merchant(),
      { type: 'rotate_webhook_secret', sealed: 's2', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
      now,
    ).state!;
    expect(liveSecrets(rotated, now).map((s) => s.sealed)).toEqual(['s2', 's1']);
    expect(liveSecrets(rotated, later(1000)).map((s) => s.sealed)).toEqual(['s2']);
    const revoked = decideMerchant(rotated, { type: 'revoke_previous', credential: 'webhook_secret', by_key_id: 'k1' }, now);
    expect(revoked.reply.revoked).toBe(true);
    expect(revoked.state!.webhook_secrets.map((s) => s.sealed)).toEqual(['s2']);
  });

  it('lets only the active key rotate or revoke: a key in its overlap cannot take the account over', () => {
    const rotated = decideMerchant(
      merchant(),
      { type: 'rotate_api_key', new_key_id: 'k2', new_key_prefix: 'p2', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
      now,
    ).state!;
    expect(() =>
      decideMerchant(
        rotated,
        { type: 'rotate_api_key', new_key_id: 'k3', new_key_prefix: 'p3', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
        now,
      ),
    ).toThrow(/only the active API key/);
    expect(() => decideMerchant(rotated, { type: 'revoke_previous', credential: 'api_key', by_key_id: 'k1' }, now)).toThrow(
      /only the active API key/,
    );
    expect(() =>
      decideMerchant(
        rotated,
        { type: 'rotate_webhook_secret', sealed: 's9', overlap_until: later(1000).toISOString(), by_key_id: 'k1' },
        now,
      ),
    ).toThrow(/only the active API key/);
  });

  it('sets KYC status and rate limit, and refuses an unknown merchant', () => {
    expect(decideMerchant(merchant(), { type: 'set_kyc', status: 'verified' }, now).state!.kyc_status).toBe('verified');
    expect(decideMerchant(merchant(), { type: 'set_rate_limit', rate_limit_per_minute: 5 }, now).state!.rate_limit_per_minute).toBe(5);
    expect(() => decideMerchant(null, { type: 'set_kyc', status: 'verified' }, now)).toThrow(/merchant not found/);
  });
});
