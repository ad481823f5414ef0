/**
 * What the money-out kill tests (payouts-crash, refunds-crash) share: a Hardhat node, a holding proxy in
 * front of it (it passes a raw transaction on, so it lands, but never answers), one DATA_DIR for every
 * node of the test (in-process test nodes and `node index.ts` children), the environment that points them
 * there (1 confirmation, fast polls, a 1 s chain lease), and the clean-up of everything started.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startHardhatNode, type HardhatNode } from '../harness/hardhat-node.ts';
import { tempDir, type TestNode } from './node.ts';
import { type ChildNode } from './child-node.ts';
import { holdingProxy, type HoldingProxy } from './holding-proxy.ts';
import { openStore, type Store } from '../../lib/store/index.ts';

export interface CrashEnv {
  chain: HardhatNode;
  proxy: HoldingProxy;
  dataDir: string;
  /** the nodes' environment: DATA_DIR and the chain (not the proxy) */
  env: Record<string, string>;
  /** children and in-process nodes to kill or stop at the end */
  children: ChildNode[];
  nodes: TestNode[];
  /** SIGKILLs a child and waits for its exit */
  kill(c: ChildNode): Promise<void>;
  /** reads the store of the data dir while no node holds it open */
  peek<T>(read: (s: Store) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function startCrashEnv(): Promise<CrashEnv> {
  const dataDir = tempDir();
  const chain = await startHardhatNode();
  const proxy = await holdingProxy(chain.url);
  const children: ChildNode[] = [];
  const nodes: TestNode[] = [];
  let store: Store | null = null;
  return {
    chain,
    proxy,
    dataDir,
    env: {
      DATA_DIR: dataDir,
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: '100',
      BROADCAST_POLL_INTERVAL_MS: '100',
      CHAIN_LEASE_TTL_MS: '1000',
    },
    children,
    nodes,
    kill: (c) =>
      new Promise<void>((r) => {
        c.proc.once('exit', () => r());
        c.proc.kill('SIGKILL');
      }),
    async peek(read) {
      store = await openStore(`sqlite:${join(dataDir, 'service.db')}`);
      try {
        return await read(store);
      } finally {
        await store.close();
        store = null;
      }
    },
    async close() {
      for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
      for (const n of nodes) await n.stop();
      await store?.close();
      await proxy.close();
      await chain.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
