/**
 * The registration flow on a cluster over a real NATS server: a gateway-only node, a node with the
 * merchant services, and a full node, sharing one store. Steps alternate between the two HTTP nodes.
 */
import { eventually } from '../helpers/wait.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { ensureNats } from '../helpers/nats.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { solvePow } from '../../lib/onboarding/pow.ts';

describe('onboarding on a cluster over NATS', () => {
  let dir: string;
  let db: TestDatabase;
  let gateway: TestNode;
  let worker: TestNode;
  let full: TestNode;

  beforeAll(async () => {
    const nats = await ensureNats();
    dir = tempDir('cluster-');
    db = await freshDatabase('cluster_onboarding');
    const shared = {
      TRANSPORTER: nats,
      NAMESPACE: `test-${randomBytes(4).toString('hex')}`,
      DATA_DIR: dir,
      STORE_URL: db.url,
      MASTER_KEY: randomBytes(32).toString('hex'),
      TRUSTED_EMAIL_DOMAINS: 'cluster.example',
    };
    worker = await startTestNode({ ...shared, NODE_ID: 'worker', SERVICES: 'merchants,merchant-actors,operators,discovery,housekeeping' });
    gateway = await startTestNode({ ...shared, NODE_ID: 'gateway', SERVICES: 'api' });
    full = await startTestNode({ ...shared, NODE_ID: 'full' });
    // wait until the gateway sees the worker's services
    await gateway.node.broker.waitForServices(['merchants', 'merchant-actors', 'discovery'], 10_000);
    // and until every caller knows both holders of merchant actors: Shard routing by id agrees only
    // between callers that see the same nodes
    const holders = (t: TestNode) =>
      (t.node.broker.registry as unknown as { getActionEndpoints(a: string): { count(): number } | undefined })
        .getActionEndpoints('merchant-actors.send')
        ?.count() ?? 0;
    await eventually('both merchant-actor holders to be known everywhere', () => holders(gateway) === 2 && holders(full) === 2);
  });

  afterAll(async () => {
    await Promise.all([gateway, worker, full].filter(Boolean).map((n) => n.stop()));
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the four steps across nodes and authenticates anywhere', async () => {
    const email = 'owner@cluster.example';
    const step1 = await gateway.request('POST', '/v1/merchants/email-verification', { body: { email } });
    expect(step1.status).toBe(200);
    const intent = step1.body.registration_intent_id;
    // the code was mailed by whichever node ran the merchants service
    const code = await Promise.any([worker.mailer.waitForCode(email), full.mailer.waitForCode(email)]);
    expect(code).toMatch(/^\d{6}$/);
    const confirm = await full.request('POST', '/v1/merchants/email-verification/confirm', {
      body: { registration_intent_id: intent, code },
    });
    expect(confirm.body).toEqual({ registration_intent_id: intent, verified: true });
    const pow = await gateway.request('POST', '/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: intent } });
    expect(pow.body.required).toBe(true);
    const reg = await full.request('POST', '/v1/merchants', {
      body: {
        name: 'Cluster Shop',
        sandbox: true,
        registration_intent_id: intent,
        proof_of_work_challenge_id: pow.body.challenge_id,
        proof_of_work_nonce: solvePow(pow.body.challenge, pow.body.difficulty),
      },
    });
    expect(reg.status).toBe(201);
    for (const node of [gateway, full]) {
      const me = await node.request('GET', '/v1/me', { key: reg.body.api_key });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(reg.body.id);
    }
    // rotation through one node is seen by the other at once
    const rot = await gateway.request('POST', '/v1/me/credentials/rotate', { key: reg.body.api_key });
    expect(rot.status).toBe(200);
    await full.request('POST', '/v1/me/credentials/revoke', { key: rot.body.api_key });
    expect((await gateway.request('GET', '/v1/me', { key: reg.body.api_key })).status).toBe(401);
    expect((await full.request('GET', '/v1/me', { key: rot.body.api_key })).status).toBe(200);
  });

  it('shares one rate-limit count across the nodes', async () => {
    const { bearer_token } = await full.call('operators.createUser', { email: 'ops@cluster.example' });
    const reg = await gateway.request('POST', '/v1/merchants', { bearer: bearer_token, body: { name: 'Limited', sandbox: true } });
    expect(reg.status).toBe(201);
    await full.call('operators.setRateLimit', { merchant_id: reg.body.id, rate_limit_per_minute: 4 });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? gateway : full).request('GET', '/v1/me', { key: reg.body.api_key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('keeps one merchant actor consistent when both nodes hold it', async () => {
    const { bearer_token } = await full.call('operators.createUser', { email: 'race@cluster.example' });
    const reg = await full.request('POST', '/v1/merchants', { bearer: bearer_token, body: { name: 'Race', sandbox: true } });
    // concurrent messages sent to the actor on BOTH nodes (as during a rebalance): every one applies once
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        full.node.broker.call(
          'merchant-actors.send',
          { id: reg.body.id, msg: { type: 'set_rate_limit', rate_limit_per_minute: 100 + i } },
          { nodeID: i % 2 ? 'worker' : 'full' },
        ),
      ),
    );
    expect(results).toHaveLength(6);
    const doc = await full.node.rt.store.get<{ id: string; version: number; rate_limit_per_minute: number }>('merchants', reg.body.id);
    // created at version 1, then six compare-and-set writes
    expect(doc!.version).toBe(7);
  });
});
