/**
 * Two nodes over a real NATS server, each caching what it reads to authenticate API keys (with a TTL far
 * longer than the test, so only the invalidation can explain the answers): a rotation, a revocation and
 * a new rate_limit_per_minute made through one node hold on the other at once, and the rate-limit count
 * is one per merchant across both.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { ensureNats } from '../helpers/nats.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { CapturingMailer, startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { registerMerchant } from '../helpers/merchant.ts';
import { eventually } from '../helpers/wait.ts';

const sees = (t: TestNode, nodeID: string) =>
  t.node.broker.registry
    .getNodeList({ onlyAvailable: true, withServices: true })
    .some((n) => n.id === nodeID && (n as unknown as { services: Array<{ name: string }> }).services.some((s) => s.name === 'api'));

describe('auth cache on two nodes over NATS', () => {
  let dir: string;
  let db: TestDatabase;
  let a: TestNode;
  let b: TestNode;

  beforeAll(async () => {
    const nats = await ensureNats();
    dir = tempDir('auth-cluster-');
    db = await freshDatabase('auth_cluster');
    const shared = {
      TRANSPORTER: nats,
      NAMESPACE: `test-${randomBytes(4).toString('hex')}`,
      DATA_DIR: dir,
      STORE_URL: db.url,
      MASTER_KEY: randomBytes(32).toString('hex'),
      AUTH_CACHE_TTL_MS: '600000',
    };
    // one mailer for both: either node's mail outbox may deliver the verification code
    const mailer = new CapturingMailer();
    a = await startTestNode({ ...shared, NODE_ID: 'auth-a' }, { mailer });
    b = await startTestNode({ ...shared, NODE_ID: 'auth-b' }, { mailer });
    // each node must see the other's gateway (the invalidation goes to every node running it)
    await eventually('both gateways in both registries', () => sees(a, 'auth-b') && sees(b, 'auth-a'));
  });

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((n) => n.stop()));
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a rotation and a revocation through one node hold on the other at once', async () => {
    const { bearer_token } = await a.call('operators.createUser', { email: 'owner@auth.example' });
    const m = await registerMerchant(a, { bearer: bearer_token, sandbox: true });
    // both nodes have the key cached
    for (const n of [a, b]) expect((await n.request('GET', '/v1/me', { key: m.apiKey })).status).toBe(200);
    const rot = await a.request('POST', '/v1/me/credentials/rotate', { key: m.apiKey });
    expect(rot.status).toBe(200);
    // the overlap: both keys work on both nodes, and B shows the new key's prefix
    const me = await b.request('GET', '/v1/me', { key: m.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.api_key_prefix).toBe(rot.body.api_key.slice(0, me.body.api_key_prefix.length));
    expect((await b.request('GET', '/v1/me', { key: rot.body.api_key })).status).toBe(200);
    // the revocation through A: B refuses the old key on its very next request
    expect((await a.request('POST', '/v1/me/credentials/revoke', { key: rot.body.api_key })).body).toEqual({
      credential: 'api_key',
      revoked: true,
    });
    expect((await b.request('GET', '/v1/me', { key: m.apiKey })).status).toBe(401);
    expect((await a.request('GET', '/v1/me', { key: m.apiKey })).status).toBe(401);
    expect((await b.request('GET', '/v1/me', { key: rot.body.api_key })).status).toBe(200);
  });

  it('a new rate_limit_per_minute holds on every node at once; one count across both', async () => {
    const { bearer_token } = await b.call('operators.createUser', { email: 'limits@auth.example' });
    const m = await registerMerchant(b, { bearer: bearer_token, sandbox: true });
    // cached with the default limit (60) on both nodes: counts 1 and 2
    for (const n of [a, b]) expect((await n.request('GET', '/v1/me', { key: m.apiKey })).status).toBe(200);
    await a.call('operators.setRateLimit', { merchant_id: m.id, rate_limit_per_minute: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await (i % 2 ? a : b).request('GET', '/v1/me', { key: m.apiKey })).status);
    // counts 3, 4, 5 pass; 6 and 7 are over the new limit, whichever node answers
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await b.request('GET', '/v1/me', { key: m.apiKey });
    expect(refused.body).toMatchObject({ code: 4, message: 'rate limit of 5 requests per minute exceeded, retry later' });
  });
});
