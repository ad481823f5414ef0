/**
 * How `npm run repl` joins a service started with `npm start` in the one-process default (no
 * TRANSPORTER): the service opens a Unix socket in its data dir (`DATA_DIR/node.sock`; the directory is
 * 0700, so only its owner can connect) and relays Moleculer's packets between its own broker and the
 * brokers that connect there, as NATS does for a cluster. The packets are sealed like the cluster's
 * (lib/cluster/sealed-transport.ts, the same key), so a process that can open the socket but does not
 * hold the cluster key can neither read nor forge anything.
 *
 * The relay is a topic bus, like Moleculer's in-process Fake transporter: a broker subscribes to the
 * exact topics Moleculer names (`MOL-payments.REQ.<node>`, `MOL-payments.HEARTBEAT`, …) and every packet
 * published on a topic goes to each subscriber of it. Frames on the socket: u32 length of the rest, u8
 * type (1 subscribe, 2 publish or deliver), u16 topic length, topic, payload.
 */
import { chmodSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Transporters } from 'moleculer';

const SUBSCRIBE = 1;
const PUBLISH = 2;
/** a Unix socket path longer than this does not fit sockaddr_un on Linux and macOS */
const MAX_PATH = 100;

export const localSocketPath = (dataDir: string): string => join(dataDir, 'node.sock');

function frame(type: number, topic: string, payload: Buffer = Buffer.alloc(0)): Buffer {
  const t = Buffer.from(topic);
  const head = Buffer.alloc(7);
  head.writeUInt32BE(3 + t.length + payload.length, 0);
  head.writeUInt8(type, 4);
  head.writeUInt16BE(t.length, 5);
  return Buffer.concat([head, t, payload]);
}

/** Splits a byte stream into frames. */
function frameReader(onFrame: (type: number, topic: string, payload: Buffer) => void): (chunk: Buffer) => void {
  let buffer: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
    while (buffer.length >= 4 && buffer.length >= 4 + buffer.readUInt32BE(0)) {
      const end = 4 + buffer.readUInt32BE(0);
      const topicEnd = 7 + buffer.readUInt16BE(5);
      onFrame(buffer.readUInt8(4), buffer.subarray(7, topicEnd).toString(), buffer.subarray(topicEnd, end));
      buffer = buffer.subarray(end);
    }
  };
}

/** Whether a live process serves the socket at `path`. */
export function localSocketLive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection(path);
    s.once('connect', () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

type Deliver = (topic: string, payload: Buffer) => void;

/** One broker attached to the hub: in this process, or a client on the socket. */
interface Port {
  subscribe(topic: string): void;
  publish(topic: string, payload: Buffer): void;
  detach(): void;
}

export class LocalHub {
  readonly path: string;
  private readonly server: Server;
  private readonly topics = new Map<string, Set<Deliver>>();
  private readonly clients = new Set<Socket>();

  private constructor(path: string, server: Server) {
    this.path = path;
    this.server = server;
  }

  /**
   * Opens the socket; null (and nothing opened) when the path is too long, or another live process
   * already serves it (several nodes on one data dir: the REPL joins the first). A socket left behind by
   * a killed process is replaced.
   */
  static async open(path: string): Promise<LocalHub | null> {
    if (path.length > MAX_PATH) return null;
    for (let attempt = 0; attempt < 2; attempt++) {
      const server = createServer();
      const hub = new LocalHub(path, server);
      server.on('connection', (socket) => hub.serve(socket));
      const listening = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
        server.once('error', resolve);
        server.listen(path, () => resolve(null));
      });
      if (!listening) {
        chmodSync(path, 0o600);
        server.unref();
        return hub;
      }
      if (listening.code !== 'EADDRINUSE' || (await localSocketLive(path))) return null;
      unlinkSync(path); // stale: its process is gone
    }
    return null;
  }

  /** A broker of this process on the hub (no socket in between). */
  attach(deliver: Deliver): Port {
    const mine = new Set<string>();
    return {
      subscribe: (topic) => {
        mine.add(topic);
        this.subscribers(topic).add(deliver);
      },
      publish: (topic, payload) => this.route(topic, payload),
      detach: () => {
        for (const t of mine) this.topics.get(t)?.delete(deliver);
      },
    };
  }

  private subscribers(topic: string): Set<Deliver> {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    return set;
  }

  private route(topic: string, payload: Buffer): void {
    // delivered on a later tick, as a network would: a publisher never re-enters itself
    for (const deliver of this.topics.get(topic) ?? []) setImmediate(() => deliver(topic, payload));
  }

  private serve(socket: Socket): void {
    this.clients.add(socket);
    const deliver: Deliver = (topic, payload) => {
      if (!socket.destroyed) socket.write(frame(PUBLISH, topic, payload));
    };
    const port = this.attach(deliver);
    socket.on(
      'data',
      frameReader((type, topic, payload) => {
        if (type === SUBSCRIBE) port.subscribe(topic);
        else if (type === PUBLISH) port.publish(topic, payload);
      }),
    );
    const gone = () => {
      port.detach();
      this.clients.delete(socket);
    };
    socket.on('close', gone);
    socket.on('error', gone);
  }

  async close(): Promise<void> {
    for (const s of this.clients) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    try {
      unlinkSync(this.path);
    } catch {
      /* already gone */
    }
  }
}

/** A Moleculer transporter over the hub: in the serving process (`hub`) or from another one (`path`). */
export class LocalSocketTransporter extends Transporters.Base {
  private readonly link: { hub: LocalHub } | { path: string };
  private port: Port | null = null;
  private socket: Socket | null = null;
  private readonly commands = new Map<string, string>();

  constructor(link: { hub: LocalHub } | { path: string }) {
    super({});
    this.link = link;
  }

  private deliver = (topic: string, payload: Buffer) => {
    const cmd = this.commands.get(topic);
    if (cmd) void this.receive(cmd, payload);
  };

  async connect(): Promise<void> {
    if ('hub' in this.link) {
      this.port = this.link.hub.attach(this.deliver);
    } else {
      const path = this.link.path;
      const socket = createConnection(path);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.on(
        'data',
        frameReader((_type, topic, payload) => this.deliver(topic, payload)),
      );
      socket.on('error', (e) => this.logger.warn(`local socket ${path}: ${e.message}`));
      this.socket = socket;
      this.port = {
        subscribe: (topic) => socket.write(frame(SUBSCRIBE, topic)),
        publish: (topic, payload) => socket.write(frame(PUBLISH, topic, payload)),
        detach: () => socket.end(),
      };
    }
    await this.onConnected();
  }

  async disconnect(): Promise<void> {
    this.connected = false;
    this.port?.detach();
    this.port = null;
    this.socket?.destroy();
    this.socket = null;
  }

  async subscribe(cmd: string, nodeID?: string): Promise<void> {
    const topic = this.getTopicName(cmd, nodeID);
    this.commands.set(topic, cmd);
    this.port?.subscribe(topic);
  }

  // Moleculer balances requests and events itself over node topics
  async subscribeBalancedRequest(): Promise<void> {}
  async subscribeBalancedEvent(): Promise<void> {}

  async send(topic: string, data: Buffer): Promise<void> {
    this.port?.publish(topic, data);
  }
}
