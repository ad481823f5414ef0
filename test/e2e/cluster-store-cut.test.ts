/**
 * Two nodes over NATS on one PostgreSQL, one of them reaching it through a link the test cuts: while the
 * node is cut from the store but still on NATS it leaves the actor shards (sessions, merchants, agent
 * wallets), so every request the healthy node takes succeeds, instead of the share of the cut node's
 * actors answering 503; once the link is back the node hosts actors again and takes its share back.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { ensureNats } from '../helpers/nats.ts';
import { CapturingMailer, startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { cuttableLink, type CuttableLink } from '../helpers/tcp-cut.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { ETH_USDC, eventually, merchant } from '../integration/sessions-helpers.ts';
import type { ActorHost } from '../../actors/runtime.ts';

const ACTOR_SERVICES = ['session-actors', 'merchant-actors', 'agent-wallet-actors'];

describe('a node cut from PostgreSQL but not from NATS', () => {
  let db: TestDatabase;
  let link: CuttableLink;
  let a: TestNode;
  let b: TestNode;
  let m: RegisteredMerchant;
  const dirs: string[] = [];

  /** the nodes that host `service`, as node `t` sees them */
  const hosts = (t: TestNode, service: string) =>
    t.node.broker.registry
      .getServiceList({ onlyAvailable: true, skipInternal: true })
      .filter((s) => s.name === service)
      .map((s) => s.nodeID ?? '')
      .sort();

  const payAll = async (via: TestNode[], n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = via[i % via.length];
      const s = await t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { amount: 2, expires_in: '1h', paymentMethod: ETH_USDC },
      });
      statuses.push(s.status);
      if (s.status !== 201) continue;
      statuses.push((await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey })).status);
    }
    return statuses;
  };

  beforeAll(async () => {
    const nats = await ensureNats();
    db = await freshDatabase('storecut');
    const target = new URL(db.url);
    link = await cuttableLink(target.hostname, Number(target.port));
    const throughLink = new URL(db.url);
    throughLink.port = String(link.port);
    const shared = {
      TRANSPORTER: nats,
      NAMESPACE: `storecut-${randomBytes(4).toString('hex')}`,
      DATA_DIR: tempDir('storecut-'),
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    const mailer = new CapturingMailer();
    dirs.push(shared.DATA_DIR);
    a = await startTestNode({ ...shared, STORE_URL: db.url, NODE_ID: `cut-a-${randomBytes(3).toString('hex')}` }, { mailer });
    b = await startTestNode(
      { ...shared, STORE_URL: throughLink.toString(), NODE_ID: `cut-b-${randomBytes(3).toString('hex')}` },
      { mailer },
    );
    await eventually('both nodes to host the actors, as each other sees it', () =>
      ACTOR_SERVICES.every((s) => hosts(a, s).length === 2 && hosts(b, s).length === 2),
    );
    m = await merchant(a);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((n) => n.stop()));
    await link?.close();
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('leaves the actor shards while cut, so the healthy node answers every request, and takes its share back when healed', async () => {
    // both nodes hold actors before the cut
    expect(await payAll([a, b], 8)).toEqual(
      Array(16)
        .fill(201)
        .map((s, i) => (i % 2 ? 200 : s)),
    );

    link.cut();
    await eventually('the cut node to leave the actor shards', () => ACTOR_SERVICES.every((s) => hosts(a, s).length === 1), 30_000);
    expect(ACTOR_SERVICES.every((s) => !b.node.broker.getLocalService(s))).toBe(true);
    // every session and completion through the healthy node succeeds: no actor is left on the cut node
    expect(await payAll([a], 16)).toEqual(
      Array(32)
        .fill(201)
        .map((s, i) => (i % 2 ? 200 : s)),
    );
    // the cut node itself answers a retryable 503, never a 500
    const fromCut = await b.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 2, expires_in: '1h', paymentMethod: ETH_USDC },
    });
    expect(fromCut.status).toBe(503);
    expect(fromCut.body).toMatchObject({ retryable: true });

    link.heal();
    await eventually('the healed node to host actors again', () => ACTOR_SERVICES.every((s) => hosts(a, s).length === 2), 30_000);
    expect(await payAll([a, b], 16)).toEqual(
      Array(32)
        .fill(201)
        .map((s, i) => (i % 2 ? 200 : s)),
    );
    // the healed node took its share of the new sessions' actors back
    const sessionHost = b.node.broker.getLocalService('session-actors') as unknown as { actors: ActorHost<never, never, never> };
    expect(sessionHost.actors.size).toBeGreaterThan(0);
  }, 180_000);
});
