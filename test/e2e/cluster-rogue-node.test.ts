/**
 * A node that reaches NATS but lacks the cluster's credentials cannot fake a payment or act as an
 * operator: without the NATS user it cannot connect, and with stolen NATS credentials but without the
 * cluster key (CLUSTER_SECRET) its packets are dropped, so it never sees a service and cannot call
 * `session-actors.send` (a forged credit) or `operators.*`.
 */
import { randomBytes } from 'node:crypto';
import { ServiceBroker } from 'moleculer';
import { connect } from 'nats';
import { startNatsServer } from '../helpers/nats.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { sealedTransport } from '../../lib/cluster/sealed-transport.ts';
import { ETH_USDC, eventually, merchant } from '../integration/sessions-helpers.ts';

describe('a rogue node on the cluster transport', () => {
  let nats: Awaited<ReturnType<typeof startNatsServer>>;
  let a: TestNode;
  const ns = `rogue-${randomBytes(4).toString('hex')}`;
  const user = 'cluster';
  const pass = randomBytes(12).toString('hex');
  const brokers: ServiceBroker[] = [];

  const rogue = (options: Record<string, unknown>, middlewares: unknown[] = []) => {
    const b = new ServiceBroker({
      namespace: ns,
      nodeID: `rogue-${randomBytes(3).toString('hex')}`,
      logger: false,
      transporter: { type: 'NATS', options: { servers: [`127.0.0.1:${nats.port}`], ...options } },
      middlewares: middlewares as never,
      requestTimeout: 3000,
    });
    brokers.push(b);
    return b;
  };

  beforeAll(async () => {
    nats = await startNatsServer(['--user', user, '--pass', pass]);
    a = await startTestNode({
      TRANSPORTER: nats.url,
      NAMESPACE: ns,
      NATS_USER: user,
      NATS_PASSWORD: pass,
      CLUSTER_SECRET: randomBytes(16).toString('hex'),
      NODE_ID: `legit-${randomBytes(3).toString('hex')}`,
    });
  });

  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.stop().catch(() => undefined)));
    await a?.stop();
    nats?.stop();
  });

  it('cannot connect without the NATS credentials', async () => {
    await expect(connect({ servers: `127.0.0.1:${nats.port}`, reconnect: false })).rejects.toThrow(/Authorization/i);
    await expect(connect({ servers: `127.0.0.1:${nats.port}`, user, pass: 'guessed', reconnect: false })).rejects.toThrow(/Authorization/i);
  });

  it('with stolen NATS credentials but no cluster key, sees no service and cannot credit a session', async () => {
    const m = await merchant(a);
    const created = await a.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC },
    });
    expect(created.status).toBe(201);
    const id = created.body.session_id;

    // a packet sealed under another key is as good as none
    const b = rogue({ user, pass }, [sealedTransport(randomBytes(32))]);
    await b.start();
    const unsealed = rogue({ user, pass });
    await unsealed.start();
    // give discovery every chance: heartbeats and INFO packets flow for a few seconds
    await new Promise((r) => setTimeout(r, 3000));
    for (const r of [b, unsealed]) {
      expect(r.registry.getNodeList({ onlyAvailable: true, withServices: false }).map((n: { id: string }) => n.id)).not.toContain(
        a.node.broker.nodeID,
      );
      const forged = {
        type: 'credit',
        deposit: {
          key: `ethereum:testnet:0x${'ab'.repeat(32)}:0`,
          tx_hash: `0x${'ab'.repeat(32)}`,
          index: 0,
          amount_subunits: '1000000',
          token: 'USDC',
          confirmations: 99,
          detected_at: new Date().toISOString(),
        },
      };
      await expect(r.call('session-actors.send', { id, msg: forged })).rejects.toThrow();
      await expect(r.call('operators.setKyc', { merchant_id: m.id, status: 'verified' })).rejects.toThrow();
      await expect(r.call('session-actors.send', { id, msg: forged }, { nodeID: a.node.broker.nodeID })).rejects.toThrow();
    }
    // the legitimate node saw nothing of it
    const s = (await a.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey })).body;
    expect(s.status).toBe('pending');
    expect(await a.node.rt.store.count('webhook_events', { session_id: id })).toBe(0);
    const me = (await a.request('GET', '/v1/me', { key: m.apiKey })).body;
    expect(me.kyc_status ?? 'none').not.toBe('verified');
  });

  it('a full node configured with another CLUSTER_SECRET is not admitted', async () => {
    const b = await startTestNode({
      TRANSPORTER: nats.url,
      NAMESPACE: ns,
      NATS_USER: user,
      NATS_PASSWORD: pass,
      CLUSTER_SECRET: 'wrong-on-purpose',
      SERVICES: 'merchants',
      NODE_ID: `other-${randomBytes(3).toString('hex')}`,
    });
    try {
      await new Promise((r) => setTimeout(r, 2000));
      expect(
        b.node.broker.registry.getNodeList({ onlyAvailable: true, withServices: false }).map((n: { id: string }) => n.id),
      ).not.toContain(a.node.broker.nodeID);
    } finally {
      await b.stop();
    }
    await eventually('the legitimate node to stay healthy', async () => (await a.request('GET', '/v1/payment_methods')).status === 200);
  });
});
