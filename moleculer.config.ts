/**
 * Broker options, built from the configuration. Embedded default: no transporter, every service local.
 * Cluster: TRANSPORTER=nats://… and each node runs the services named in SERVICES.
 */
import { readFileSync } from 'node:fs';
import type { BrokerOptions, Transporters } from 'moleculer';
import type { Config } from './config/index.ts';
import { sealedTransport } from './lib/cluster/sealed-transport.ts';
import { restartedNodes } from './lib/cluster/restarted-nodes.ts';

/** The NATS transporter with the configured credentials and TLS (README: Security, cluster transport). */
function transporter(config: Config): BrokerOptions['transporter'] {
  if (!config.transporter) return null;
  const c = config.cluster;
  if (!config.transporter.startsWith('nats://') && !config.transporter.startsWith('tls://'))
    return config.transporter as BrokerOptions['transporter'];
  // `servers`, not `url`: Moleculer's NATS transporter overwrites user/pass with the URL's (empty) ones
  const urls = config.transporter.split(',').map((u) => new URL(u.trim()));
  const options: Record<string, unknown> = { servers: urls.map((u) => u.host) };
  const user = c.natsUser || decodeURIComponent(urls[0].username);
  if (user) Object.assign(options, { user, pass: c.natsPassword || decodeURIComponent(urls[0].password) });
  if (c.natsToken) options.token = c.natsToken;
  if (c.tls) {
    options.tls = {
      ...(c.tls.caFile ? { ca: readFileSync(c.tls.caFile, 'utf8') } : {}),
      ...(c.tls.certFile ? { cert: readFileSync(c.tls.certFile, 'utf8'), key: readFileSync(c.tls.keyFile, 'utf8') } : {}),
    };
  }
  return { type: 'NATS', options } as BrokerOptions['transporter'];
}

/** `clusterKey` seals every packet between nodes (lib/cluster/sealed-transport.ts); required with a transporter or the local socket. */
export function brokerOptions(config: Config, clusterKey?: Buffer, local?: Transporters.Base | null): BrokerOptions {
  const networked = Boolean(config.transporter || local);
  if (networked && !clusterKey) throw new Error('a cluster node needs a cluster key (CLUSTER_SECRET or MASTER_KEY)');
  return {
    namespace: config.namespace,
    nodeID: config.nodeId,
    // one process: none, or the local socket the REPL joins (lib/cluster/local-socket.ts), sealed the same way
    transporter: config.transporter ? transporter(config) : (local ?? null),
    middlewares: networked && clusterKey ? [sealedTransport(clusterKey), restartedNodes()] : [],
    logger: {
      type: 'Console',
      options: { level: config.logLevel, formatter: 'short', colors: false, moduleColors: false, autoPadding: false },
    },
    // Actor calls pick their node by id (Shard strategy on the action); the rest balance round-robin.
    registry: { strategy: 'RoundRobin', preferLocal: false },
    requestTimeout: 30_000,
    retryPolicy: { enabled: false },
    // Moleculer's own metrics and tracing stay off: prom-client serves the metrics the spec names.
    metrics: false,
    tracing: false,
    validator: false,
    // a node cut from the transporter is dropped after 8 s, and the calls waiting on it fail then (a
    // retryable 503) instead of at the 30 s request timeout; 2 s beats keep a loaded node from being dropped
    heartbeatInterval: 2,
    heartbeatTimeout: 8,
    cacher: null,
    errorHandler(err) {
      throw err;
    },
  } as BrokerOptions;
}
