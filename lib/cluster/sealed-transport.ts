/**
 * Seals every packet between nodes with AES-256-GCM under the cluster key (CLUSTER_SECRET, or a key
 * derived from the master key every node already shares). A node without the key can neither read the
 * traffic nor forge a packet: its packets fail authentication and are dropped before Moleculer parses
 * them, so it cannot join the cluster, call an action (`session-actors.send`, `operators.*`) or emit an
 * event. This is a Moleculer transmit middleware; it holds no broker state.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV = 12;
const TAG = 16;

export interface TransportSealLogger {
  warn(...args: unknown[]): void;
}

export function sealPacket(key: Buffer, topic: string, data: Buffer): Buffer {
  const iv = randomBytes(IV);
  const c = createCipheriv('aes-256-gcm', key, iv);
  // the topic is authenticated too: a packet captured on one subject cannot be replayed on another
  c.setAAD(Buffer.from(topic));
  const ct = Buffer.concat([c.update(data), c.final()]);
  return Buffer.concat([Buffer.of(VERSION), iv, c.getAuthTag(), ct]);
}

/** The plaintext, or null when the packet was not sealed with this key (or was altered). */
export function openPacket(key: Buffer, topic: string, packet: Buffer): Buffer | null {
  if (packet.length < 1 + IV + TAG || packet[0] !== VERSION) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', key, packet.subarray(1, 1 + IV));
    d.setAAD(Buffer.from(topic));
    d.setAuthTag(packet.subarray(1 + IV, 1 + IV + TAG));
    return Buffer.concat([d.update(packet.subarray(1 + IV + TAG)), d.final()]);
  } catch {
    return null;
  }
}

/**
 * Moleculer sends on topics like `MOL-ns.REQ.node` or `MOL-ns.REQB.action` (balanced) and receivers see
 * only the command (`REQ`): authenticate that part, with the balanced marker folded away.
 */
export const commandOf = (topic: string): string => {
  const parts = topic.split('.');
  return (parts.length > 1 ? parts[1] : topic).replace(/B$/, '');
};

export function sealedTransport(key: Buffer): Record<string, unknown> {
  if (key.length !== 32) throw new Error('cluster key must be 32 bytes');
  let logger: TransportSealLogger = console;
  let lastWarn = 0;
  let dropped = 0;
  return {
    name: 'SealedTransport',
    created(this: { logger: TransportSealLogger }) {
      logger = this.logger;
    },
    transporterSend(next: (topic: string, data: Buffer, meta: unknown) => Promise<void>) {
      return (topic: string, data: Buffer, meta: unknown) => next(topic, sealPacket(key, commandOf(topic), data), meta);
    },
    transporterReceive(next: (cmd: string, data: Buffer, s: unknown) => unknown) {
      return (cmd: string, data: Buffer, s: unknown) => {
        const plain = openPacket(key, commandOf(`.${cmd}`), data);
        if (plain) return next(cmd, plain, s);
        dropped++;
        // a rogue or misconfigured node: say so at most once a minute, never with the packet's content
        if (Date.now() - lastWarn > 60_000) {
          lastWarn = Date.now();
          logger.warn(
            `dropped ${dropped} cluster packet(s) not sealed with this cluster's key (a node without CLUSTER_SECRET/MASTER_KEY?)`,
          );
        }
        return undefined;
      };
    },
  };
}

/** A 32-byte key from a configured secret of any length. */
export const clusterKeyFrom = (secret: string): Buffer => createHash('sha256').update(`cluster-transport:${secret}`).digest();
