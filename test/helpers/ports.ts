/** A free TCP port on 127.0.0.1 (tests, harnesses and benchmarks), and whether a child holds the one it was given. */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Whether process `pid` itself holds a listening TCP socket on `port` (Linux: its sockets' inodes in
 * /proc). A port freePort returned is free only until someone binds it: a parallel test's server may take
 * it before the child does, and then an answer on it is that server's, while the child dies of EADDRINUSE.
 */
export function listensOn(pid: number, port: number): boolean {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed between the listing and the read
      }
    }
    const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
    for (const table of ['tcp', 'tcp6']) {
      for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        const f = line.trim().split(/\s+/);
        if (f[1]?.endsWith(local) && f[3] === '0A' && inodes.has(f[9])) return true;
      }
    }
  } catch {
    // the process is gone
  }
  return false;
}
