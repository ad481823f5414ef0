/**
 * Broker options, built from the configuration. Embedded default: no transporter, every service local.
 * Cluster: TRANSPORTER=nats://… and each node runs the services named in SERVICES.
 */
import type { BrokerOptions } from 'moleculer';
import type { Config } from './config/index.ts';

export function brokerOptions(config: Config): BrokerOptions {
  return {
    namespace: config.namespace,
    nodeID: config.nodeId,
    transporter: config.transporter || null,
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
    heartbeatInterval: 5,
    heartbeatTimeout: 15,
    cacher: null,
    errorHandler(err) {
      throw err;
    },
  } as BrokerOptions;
}
