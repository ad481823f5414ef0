/**
 * Starts one node: configuration → store → services → broker. `npm start` runs every service in one
 * process on SQLite; a cluster node runs the services named in SERVICES over the TRANSPORTER.
 */
import { ServiceBroker } from 'moleculer';
import type { Config } from './config/index.ts';
import { brokerOptions } from './moleculer.config.ts';
import { openStore } from './lib/store/index.ts';
import { instrumentStore } from './lib/store/instrumented.ts';
import { createMailer, type Mailer } from './lib/runtime/mail.ts';
import { Metrics } from './lib/runtime/metrics.ts';
import { Keyring } from './lib/core/keyring.ts';
import type { Runtime } from './lib/runtime/index.ts';
import { SERVICE_FACTORIES } from './services/index.ts';
import { seedTrust } from './lib/onboarding/trust.ts';
import { clusterKeyFrom } from './lib/cluster/sealed-transport.ts';
import { ensureDataDir } from './lib/core/data-dir.ts';
import { ConfigError } from './config/errors.ts';
import { LocalHub, LocalSocketTransporter, localSocketPath } from './lib/cluster/local-socket.ts';
import { StoreFence } from './lib/cluster/store-fence.ts';

/** the services a node cut from its store keeps running: the HTTP API (a 503 in the envelope, /metrics) */
const UNFENCED = new Set(['api']);

export interface RunningNode {
  broker: ServiceBroker;
  rt: Runtime;
  /** in a cluster: leaves the node's work to its peers while its store is unreachable */
  fence: StoreFence | null;
  stop(): Promise<void>;
}

export interface NodeOptions {
  /** a clock for tests */
  now?: () => Date;
  defaultMetrics?: boolean;
  /** replaces the configured mailer (tests capture codes this way when no SMTP receiver runs) */
  mailer?: Mailer;
  /**
   * One process without TRANSPORTER: `serve` opens DATA_DIR/node.sock for the REPL to join (`npm start`);
   * `join` connects this node to a running service's socket (`npm run repl`). Ignored in a cluster.
   */
  localSocket?: 'serve' | 'join';
}

/** The transporter of a one-process node that serves (or joins) the local socket; null when there is none. */
async function localTransport(
  config: Config,
  mode: NodeOptions['localSocket'],
): Promise<{ transporter: LocalSocketTransporter; hub: LocalHub | null } | null> {
  const path = localSocketPath(config.dataDir);
  if (mode === 'join') return { transporter: new LocalSocketTransporter({ path }), hub: null };
  if (mode !== 'serve') return null;
  const hub = await LocalHub.open(path);
  return hub ? { transporter: new LocalSocketTransporter({ hub }), hub } : null;
}

export async function startNode(config: Config, opts: NodeOptions = {}): Promise<RunningNode> {
  // a setting is refused before anything starts or logs
  const names = config.services ?? Object.keys(SERVICE_FACTORIES);
  const unknown = names.find((n) => !SERVICE_FACTORIES[n]);
  if (unknown)
    throw new ConfigError(
      'SERVICES',
      names.join(','),
      `names services among ${Object.keys(SERVICE_FACTORIES).join(', ')} (or all); '${unknown}' is not one`,
    );
  ensureDataDir(config);
  const keyring = Keyring.load(config.dataDir);
  const metrics = new Metrics({ defaults: opts.defaultMetrics ?? true });
  // the store's availability reports reach the fence once the services exist
  let fence: StoreFence | null = null;
  const onAvailability = (up: boolean) => fence?.report(up);
  const store = instrumentStore(
    await openStore(config.storeUrl, { poolSize: config.storePoolSize, onAvailability }),
    metrics.storeOpDuration,
  );
  const clusterKey = config.cluster.secret ? clusterKeyFrom(config.cluster.secret) : keyring.derive('cluster-transport');
  const local = config.transporter ? null : await localTransport(config, opts.localSocket);
  const broker = new ServiceBroker(brokerOptions(config, clusterKey, local?.transporter));
  const rt: Runtime = {
    config,
    store,
    mailer: opts.mailer ?? createMailer(config.smtpUrl, config.mailFrom, broker.getLogger('mail')),
    metrics,
    keyring,
    now: opts.now ?? (() => new Date()),
  };
  await seedTrust(store, config);
  for (const name of names) broker.createService(SERVICE_FACTORIES[name](rt));
  // only a cluster has other nodes to serve for a node cut from the store; the API stays, to answer
  const fenced = names.filter((n) => !UNFENCED.has(n)).map((n) => ({ name: n, create: () => SERVICE_FACTORIES[n](rt) }));
  if (config.transporter) fence = new StoreFence(broker, fenced);
  await broker.start();
  return {
    broker,
    rt,
    fence,
    async stop() {
      await broker.stop();
      await local?.hub?.close();
      await store.close();
    },
  };
}
