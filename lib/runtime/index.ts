/** What every service of a node shares: configuration, the store, the mailer and the metrics registry. */
import type { Config } from '../../config/index.ts';
import type { Store } from '../store/port.ts';
import type { Mailer } from './mail.ts';
import type { Metrics } from './metrics.ts';
import type { Keyring } from '../core/keyring.ts';

export interface Runtime {
  config: Config;
  store: Store;
  mailer: Mailer;
  metrics: Metrics;
  /** seals secrets the service must read back (webhook secrets) */
  keyring: Keyring;
  /** the clock; tests may move it */
  now(): Date;
}
