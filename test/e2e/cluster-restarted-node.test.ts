/**
 * A node that crashes and comes back under the same NODE_ID before the heartbeat timeout is never seen as
 * disconnected, so Moleculer alone keeps the calls sent to its dead predecessor pending until the request
 * timeout. lib/cluster/restarted-nodes.ts rejects them as soon as the new instance announces itself
 * (found by test/e2e/cluster-kill.test.ts, where those calls held client requests for 30 s). Real NATS;
 * the predecessor dies without a word (its NATS connection is cut, no DISCONNECT packet).
 */
import { randomBytes } from 'node:crypto';
import { ServiceBroker, type Context } from 'moleculer';
import { ensureNats } from '../helpers/nats.ts';
import { eventually } from '../helpers/wait.ts';
import { restartedNodes } from '../../lib/cluster/restarted-nodes.ts';

describe('calls to a node that restarted within the heartbeat timeout', () => {
  const brokers: ServiceBroker[] = [];
  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.stop().catch(() => undefined)));
  });

  it('are rejected when its new instance announces itself, not left to time out', async () => {
    const nats = await ensureNats();
    const namespace = `restart-${randomBytes(4).toString('hex')}`;
    const broker = (nodeID: string, extra: Record<string, unknown> = {}) => {
      const b = new ServiceBroker({ namespace, nodeID, logger: false, transporter: nats as never, ...extra });
      brokers.push(b);
      return b;
    };
    // the caller: a request timeout and a heartbeat timeout long enough that neither decides the outcome
    const a = broker('caller', { requestTimeout: 45_000, heartbeatTimeout: 120, middlewares: [restartedNodes()] });
    const b1 = broker('worker');
    b1.createService({ name: 'work', actions: { hang: (_ctx: Context) => new Promise(() => undefined) } });
    await Promise.all([a.start(), b1.start()]);
    await a.waitForServices(['work'], 20_000);

    const pending = a.call('work.hang', {}, { nodeID: 'worker' }).then(
      () => 'answered',
      (e: { type?: string }) => e.type ?? String(e),
    );
    await eventually(
      'the call to reach the worker',
      () => (a.transit as unknown as { pendingRequests: Map<string, unknown> }).pendingRequests.size === 1,
    );
    // the worker dies without a word: its NATS connection is cut, no DISCONNECT packet is sent
    await (b1.transit as unknown as { tx: { client: { close(): Promise<void> } } }).tx.client.close();

    const b2 = broker('worker');
    b2.createService({ name: 'work', actions: { hang: () => 'fresh' } });
    await b2.start();
    expect(await pending).toBe('REQUEST_REJECTED');
    // and the caller goes on with the new instance
    expect(await a.call('work.hang', {}, { nodeID: 'worker' })).toBe('fresh');
  }, 90_000);
});
