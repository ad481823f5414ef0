/**
 * Two test nodes of one cluster over a real NATS server, sharing one DATA_DIR and one SQLite store file
 * (STORE_URL) and one capturing mailer (a registration code is sent by whichever node runs the step);
 * resolved once each sees the other. `name` names the namespace, the node ids and the temp dir.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeOptions } from '../../app.ts';
import { ensureNats } from './nats.ts';
import { CapturingMailer, startTestNode, tempDir, type TestNode } from './node.ts';
import { eventually } from './wait.ts';

export interface TwoNodes {
  a: TestNode;
  b: TestNode;
  dir: string;
  /** stops both nodes and removes the dir */
  stop(): Promise<void>;
}

export async function startTwoNodes(name: string, env: Record<string, string> = {}, opts: NodeOptions = {}): Promise<TwoNodes> {
  const nats = await ensureNats();
  const dir = tempDir(`${name}-cluster-`);
  const shared = {
    TRANSPORTER: nats,
    NAMESPACE: `${name}-${randomBytes(4).toString('hex')}`,
    DATA_DIR: dir,
    STORE_URL: `sqlite:${join(dir, 'shared.db')}`,
    ...env,
  };
  const mailer = new CapturingMailer();
  const nodes: TestNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const x of ['a', 'b'])
      nodes.push(await startTestNode({ ...shared, NODE_ID: `${name}-${x}-${randomBytes(3).toString('hex')}` }, { mailer, ...opts }));
    const [a, b] = nodes;
    await eventually(
      'both nodes to see each other',
      () =>
        a.node.broker.registry.getNodeList({ onlyAvailable: true, withServices: false }).length === 2 &&
        b.node.broker.registry.getNodeList({ onlyAvailable: true, withServices: false }).length === 2,
    );
    return { a, b, dir, stop };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}
