/**
 * The audit log over HTTP and the operator tools: the spec's events plus credential, operator, payout
 * events, each committed with its change and sealed into the merchant's hash chain; merchants page their
 * own events at GET /v1/audit-events; operators filter by merchant, type and time and verify the chains,
 * and the verification finds a changed row and a removed row at the first broken link.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import { eventually } from '../helpers/wait.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import type { Doc } from '../../lib/store/port.ts';
import { verifyChain } from '../../lib/ops/audit-chain.ts';

const run = promisify(execFile);
const ETH = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
const DESTINATION = '0x52908400098527886E0F7030069857D2E4169EE7';

jest.setTimeout(180_000);

describe('audit log and hash chains', () => {
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let other: RegisteredMerchant;
  const rows = (filter: Record<string, unknown> = {}) =>
    t.node.rt.store.find<Doc & { type: string; seq?: number; hash?: string; prev_hash?: string; chain?: string }>(
      'audit_events',
      filter as never,
      { sort: 'created_at' },
    );
  const sealed = () =>
    eventually('every audit row sealed', async () => (await t.node.rt.store.count('audit_events', { seq: { $exists: false } })) === 0);

  beforeAll(async () => {
    rx = await startReceiver(() => 200);
    t = await startTestNode({ AUDIT_SEAL_INTERVAL_MS: '50', WEBHOOK_SCAN_INTERVAL_MS: '100' });
    m = await merchant(t, { webhook_url: rx.url });
    other = await merchant(t);
  });

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
  });

  it('records the spec events and operator, credential and payout events with their change', async () => {
    // a completed sandbox session: its webhook is delivered (payment_session.webhook.delivered)
    const s = (
      await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 50, expires_in: '1h', paymentMethod: ETH } })
    ).body;
    expect((await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
    await eventually(
      'the delivered audit row',
      async () => (await rows({ type: 'payment_session.webhook.delivered', merchant_id: m.id })).length === 1,
    );
    // a merchant without webhook_url: skipped
    const s2 = (
      await t.request('POST', '/v1/payment_sessions', { key: other.apiKey, body: { amount: 1, expires_in: '1h', paymentMethod: ETH } })
    ).body;
    await t.request('POST', `/v1/payment_sessions/${s2.session_id}/simulate`, { key: other.apiKey });
    await eventually(
      'the skipped audit row',
      async () => (await rows({ type: 'payment_session.webhook.skipped', merchant_id: other.id })).length === 1,
    );
    // operator policy changes and credentials
    await t.call('operators.setKyc', { merchant_id: m.id, status: 'pending' });
    await t.call('operators.setRateLimit', { merchant_id: m.id, rate_limit_per_minute: 5000 });
    const rotated = await t.request('POST', '/v1/me/credentials/rotate', { key: m.apiKey, body: { credential: 'webhook_secret' } });
    expect(rotated.status).toBe(200);
    // a payout of the simulated money (sandbox: executed as a simulation, completed at once)
    const [wallet] = (await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data;
    const po = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: wallet.id, amount: 10, token: 'USDC', destination: DESTINATION },
    });
    expect(po.status).toBe(201);

    const types = (await rows({ merchant_id: m.id })).map((r) => r.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'merchant.registered',
        'payment_session.webhook.delivered',
        'operator.kyc.set',
        'operator.rate_limit.set',
        'merchant.webhook_secret.rotated',
        'payout.created',
        'payout.completed',
      ]),
    );
    const kyc = (await rows({ merchant_id: m.id, type: 'operator.kyc.set' }))[0];
    expect(kyc).toMatchObject({ status: 'pending', previous_status: 'none' });
    const [payout] = await rows({ merchant_id: m.id, type: 'payout.created' });
    expect(payout).toMatchObject({ payout_id: po.body.id, amount_subunits: '10000000', token: 'USDC' });
    // no secret of the merchant in any audit row
    const all = JSON.stringify(await rows());
    for (const secret of [m.apiKey, m.webhookSecret, rotated.body.webhook_secret, other.apiKey]) expect(all).not.toContain(secret);
  });

  it("seals every row into its merchant's chain: seq without gaps, each carrying the previous hash", async () => {
    await sealed();
    const chain = (await rows({ chain: m.id })).sort((a, b) => a.seq! - b.seq!);
    expect(chain.map((r) => r.seq)).toEqual(chain.map((_, i) => i + 1));
    expect(chain[0].prev_hash).toBe('0'.repeat(64));
    for (let i = 1; i < chain.length; i++) expect(chain[i].prev_hash).toBe(chain[i - 1].hash);
    const report = await t.call('ops.auditVerify', {});
    expect(report.ok).toBe(true);
    expect(report.chains.map((c: { chain: string }) => c.chain)).toEqual(expect.arrayContaining([m.id, other.id, 'platform']));
  });

  it("GET /v1/audit-events pages the merchant's own events only", async () => {
    // events may still arrive while paging (a payout's webhook delivery): every earlier one must be seen
    const before = await rows({ merchant_id: m.id });
    const first = await t.request('GET', '/v1/audit-events?limit=3', { key: m.apiKey });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.has_more).toBe(true);
    const seen = [...first.body.data];
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await t.request('GET', `/v1/audit-events?limit=3&cursor=${cursor}`, { key: m.apiKey });
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
    }
    const mine = await rows({ merchant_id: m.id });
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(before.map((r) => r.id)));
    expect(mine.map((r) => r.id)).toEqual(expect.arrayContaining(ids));
    expect(seen[0]).toEqual({
      id: expect.stringMatching(/^aud_/),
      type: expect.any(String),
      created_at: expect.any(String),
      seq: expect.any(Number),
      details: expect.any(Object),
    });
    expect(JSON.stringify(seen)).not.toMatch(/prev_hash|seal_due_at|"hash"/);
    const payouts = await t.request('GET', '/v1/audit-events?type=payout.completed', { key: m.apiKey });
    expect(payouts.body.data.map((e: { type: string }) => e.type)).toEqual(['payout.completed']);
    expect((await t.request('GET', '/v1/audit-events?limit=0', { key: m.apiKey })).status).toBe(400);
    expect((await t.request('GET', '/v1/audit-events?bogus=1', { key: m.apiKey })).status).toBe(400);
    expect((await t.request('GET', '/v1/audit-events')).status).toBe(401);
    const theirs = await t.request('GET', '/v1/audit-events?limit=100', { key: other.apiKey });
    expect(theirs.body.data.every((e: { id: string }) => !mine.some((r) => r.id === e.id))).toBe(true);
  });

  it('operators filter by merchant, type and time with npm run operator', async () => {
    const env = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'error' };
    const operator = async (...args: string[]) =>
      JSON.parse((await run(process.execPath, ['scripts/operator.ts', ...args], { env })).stdout);
    const byMerchant = await operator('audit', m.id, '100');
    expect(byMerchant.events.every((e: { merchant_id: string }) => e.merchant_id === m.id)).toBe(true);
    expect(byMerchant.count).toBeGreaterThanOrEqual(7);
    // newer rows of another type than any capped read would hold: the prefix must be filtered in the store
    const at = new Date().toISOString();
    await t.node.rt.store.write(
      Array.from({ length: 5001 }, (_, i) => ({
        op: 'insert' as const,
        coll: 'audit_events',
        doc: { id: `aud_filler${i}`, type: 'filler.event', created_at: at },
      })),
    );
    const webhooks = await operator('audit', 'payment_session.webhook.');
    expect(new Set(webhooks.events.map((e: { type: string }) => e.type))).toEqual(
      new Set(['payment_session.webhook.delivered', 'payment_session.webhook.skipped']),
    );
    expect((await operator('audit', new Date(Date.now() + 3600_000).toISOString())).count).toBe(0);
    expect((await operator('audit-verify', m.id)).ok).toBe(true);
  });

  it('the chain check finds a changed row and a removed row, at the first broken link', async () => {
    const store = t.node.rt.store;
    const chain = (await rows({ chain: m.id })).sort((a, b) => a.seq! - b.seq!);
    const target = chain[2];
    // somebody with write access to the store edits an audit row
    await store.write([
      { op: 'cas', coll: 'audit_events', doc: { ...target, type: 'operator.nothing.happened' }, expected: target.version! },
    ]);
    const changed = await t.call('ops.auditVerify', { merchant_id: m.id });
    expect(changed.ok).toBe(false);
    expect(changed.chains[0].first_broken).toEqual({ chain: m.id, seq: 3, event_id: target.id, reason: 'hash_mismatch' });
    // and removes an earlier one
    await store.write([{ op: 'delete', coll: 'audit_events', id: chain[1].id }]);
    const removed = await t.call('ops.auditVerify', { merchant_id: m.id });
    expect(removed.chains[0].first_broken).toEqual({ chain: m.id, seq: 2, event_id: null, reason: 'missing_event' });
    // the other merchants' chains are intact
    expect((await t.call('ops.auditVerify', { merchant_id: other.id })).ok).toBe(true);
  });

  it('walks a chain a page at a time: the same report at any page size, a duplicate seq on a page boundary found', async () => {
    const store = t.node.rt.store;
    const key = t.node.rt.keyring.derive('audit-chain/v1');
    const whole = await verifyChain(store, key, other.id);
    expect(whole).toMatchObject({ ok: true, first_broken: null });
    expect(whole.events).toBeGreaterThanOrEqual(2);
    for (const size of [2, 3]) expect(await verifyChain(store, key, other.id, size)).toEqual(whole);
    // a second row with seq 2 (a forged copy) lands right after a page of two
    const [second] = await rows({ chain: other.id, seq: 2 });
    const { version: _v, ...copy } = second;
    await store.write([{ op: 'insert', coll: 'audit_events', doc: { ...copy, id: `${second.id}x` } }]);
    for (const size of [2, 3, 1000]) {
      expect((await verifyChain(store, key, other.id, size)).first_broken).toEqual({
        chain: other.id,
        seq: 3,
        event_id: null,
        reason: 'missing_event',
      });
    }
  });
});
