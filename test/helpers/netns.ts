/**
 * Network namespaces for partition tests (`ip netns` + veth pairs; needs root: CI runs as root).
 *
 * Each node gets a namespace with three links to the root namespace, each a veth pair with its own /24:
 * - `nats`: the node reaches the NATS server through it (the server listens on the host side),
 * - `pg`: the same for PostgreSQL,
 * - `ctl`: HTTP from the test to the node, and from the node to the test's own servers (webhook receiver,
 *   SMTP, the chain's RPC), which listen on one service address routed through every node's `ctl` link.
 * No default route: an address is reachable only through its own link, so a link set down is a real cut
 * (the node's packets are dropped at the veth; nothing takes another way).
 *
 * Names carry this process's pid (`ppt<pid>…`), so that a run removes what a crashed earlier run left
 * (`removeStale`) without touching a run still going.
 */
import { execFileSync } from 'node:child_process';

export type LinkKind = 'nats' | 'pg' | 'ctl';
const KINDS: LinkKind[] = ['nats', 'pg', 'ctl'];

export interface NodeNet {
  ns: string;
  /** the address of the root-namespace end of each link (what the node connects to) */
  hostIp: Record<LinkKind, string>;
  /** the node's end of each link */
  nodeIp: Record<LinkKind, string>;
  /** host-side interface names (what `cut` sets down) */
  hostIf: Record<LinkKind, string>;
}

export interface Fabric {
  prefix: string;
  nodes: NodeNet[];
  /** the address the test's own servers listen on; every node reaches it through its `ctl` link */
  serviceIp: string;
  /** every host-side address (for servers that listen on a list: PostgreSQL) */
  hostIps(kind: LinkKind): string[];
  /** the /16 the fabric uses (pg_hba) */
  cidr: string;
  cut(node: number, kind: LinkKind): void;
  heal(node: number, kind: LinkKind): void;
  /** whether the link is up now */
  isUp(node: number, kind: LinkKind): boolean;
  /** argv prefix that runs a command in a node's namespace */
  exec(node: number): string[];
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Throws, with what to do, unless this process may create namespaces (root). */
export function requireRoot(): void {
  if (process.getuid?.() !== 0)
    throw new Error(
      `the partition test needs root (uid ${process.getuid?.()}): it creates network namespaces and veth links with \`ip netns\`; run it as root (CI does), e.g. sudo npx jest test/e2e/cluster-partition.test.ts`,
    );
  try {
    ip('netns', 'list');
  } catch (e) {
    throw new Error(`the partition test needs iproute2's \`ip netns\` (apt-get install iproute2): ${(e as Error).message}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops what still runs in a namespace (a node orphaned by a killed test run), then deletes it. */
function deleteNamespace(ns: string): void {
  for (const pid of ip('netns', 'pids', ns).split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  ip('netns', 'delete', ns); // takes its veth pairs with it
}

/** Removes namespaces (and what runs in them) and host-side links that runs no longer alive left behind. */
export function removeStale(): string[] {
  const removed: string[] = [];
  for (const line of ip('netns', 'list').split('\n')) {
    const m = /^(ppt(\d+)-n\d+)\b/.exec(line.trim());
    if (m && Number(m[2]) !== process.pid && !alive(Number(m[2]))) {
      deleteNamespace(m[1]);
      removed.push(m[1]);
    }
  }
  for (const line of ip('-o', 'link', 'show').split('\n')) {
    const m = /^\d+:\s+(ppt(\d+)n\d+[a-z]+)[@:]/.exec(line);
    if (m && Number(m[2]) !== process.pid && !alive(Number(m[2]))) {
      try {
        ip('link', 'delete', m[1]);
        removed.push(m[1]);
      } catch {
        /* gone with its namespace */
      }
    }
  }
  return removed;
}

/** A /16 in 10.0.0.0/8 that no address of the root namespace is in. */
function freeSecondOctet(): number {
  const used = ip('-o', '-4', 'addr', 'show');
  for (let k = 0; k < 50; k++) {
    const b = 200 + ((process.pid + k) % 50);
    if (!used.includes(` 10.${b}.`)) return b;
  }
  throw new Error('no free 10.x.0.0/16 for the partition test');
}

/** Namespaces and links for `count` nodes; destroy() removes them (call it in afterAll). */
export function createFabric(count: number): Fabric {
  requireRoot();
  removeStale();
  const prefix = `ppt${process.pid}`;
  const b = freeSecondOctet();
  const nodes: NodeNet[] = [];
  const serviceIp = `10.${b}.255.1`;
  const fabric: Fabric = {
    prefix,
    nodes,
    serviceIp,
    cidr: `10.${b}.0.0/16`,
    hostIps: (kind) => nodes.map((n) => n.hostIp[kind]),
    cut: (i, kind) => void ip('link', 'set', nodes[i].hostIf[kind], 'down'),
    heal: (i, kind) => void ip('link', 'set', nodes[i].hostIf[kind], 'up'),
    isUp: (i, kind) => /[<,]UP[,>]/.test(ip('-o', 'link', 'show', nodes[i].hostIf[kind])),
    exec: (i) => ['ip', 'netns', 'exec', nodes[i].ns],
    destroy() {
      for (const n of nodes) {
        try {
          deleteNamespace(n.ns);
        } catch {
          /* already gone */
        }
      }
    },
  };
  try {
    for (let i = 0; i < count; i++) {
      const ns = `${prefix}-n${i}`;
      ip('netns', 'add', ns);
      const n: NodeNet = { ns, hostIp: {} as NodeNet['hostIp'], nodeIp: {} as NodeNet['nodeIp'], hostIf: {} as NodeNet['hostIf'] };
      nodes.push(n);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      KINDS.forEach((kind, k) => {
        const net = `10.${b}.${i * 4 + k}`;
        const hostIf = `${prefix}n${i}${kind[0]}`;
        ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', kind, 'netns', ns);
        ip('addr', 'add', `${net}.1/24`, 'dev', hostIf);
        ip('link', 'set', hostIf, 'up');
        ip('-n', ns, 'addr', 'add', `${net}.2/24`, 'dev', kind);
        ip('-n', ns, 'link', 'set', kind, 'up');
        n.hostIp[kind] = `${net}.1`;
        n.nodeIp[kind] = `${net}.2`;
        n.hostIf[kind] = hostIf;
      });
      // the test's servers: one address, reached through the control link only
      ip('-n', ns, 'route', 'add', `${serviceIp}/32`, 'via', n.hostIp.ctl, 'dev', 'ctl');
    }
    ip('addr', 'add', `${serviceIp}/32`, 'dev', nodes[0].hostIf.ctl);
  } catch (e) {
    fabric.destroy();
    throw e;
  }
  return fabric;
}
