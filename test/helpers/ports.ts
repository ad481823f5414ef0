/**
 * A free TCP port on 127.0.0.1 (tests, harnesses and benchmarks), whether a child holds the one it was
 * given, and the wait until a server a test started serves on it.
 */
import type { ChildProcess } from 'node:child_process';
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

/** A server that exited before it served: `output` is what it printed (a port taken shows EADDRINUSE there). */
export class ExitedBeforeListening extends Error {
  readonly output: string;
  constructor(what: string, how: number | string, output: string) {
    super(`${what} exited (${how}) before it served${output ? `: ${output}` : ''}`);
    this.output = output;
  }
}

export interface ListeningOptions {
  /** default 60 s: a loaded machine takes seconds to start a node process or open a large database */
  timeoutMs?: number;
  everyMs?: number;
  /** what the process printed so far, for the errors */
  output?: () => string;
  /** what a start that timed out does to the process (default SIGKILL: never left running behind a failed start) */
  onTimeout?: () => void;
}

/**
 * Waits until `proc` serves on `port`: `probe` (the server's own readiness question: an HTTP 200, a NATS
 * greeting) says yes, and the process itself holds the port, so the answer is not a server that took the
 * port first. Throws ExitedBeforeListening when the process exits first; at the deadline, ends the
 * process (`onTimeout`) and throws.
 */
export async function untilListening(
  what: string,
  proc: ChildProcess,
  port: number,
  probe: () => Promise<boolean>,
  o: ListeningOptions = {},
): Promise<void> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new ExitedBeforeListening(what, proc.exitCode ?? proc.signalCode!, o.output?.() ?? '');
    if ((await probe().catch(() => false)) && listensOn(proc.pid!, port)) return;
    if (Date.now() > deadline) {
      (o.onTimeout ?? (() => proc.kill('SIGKILL')))();
      const out = o.output?.();
      throw new Error(`${what} did not serve on port ${port} within ${timeoutMs / 1000} s${out ? `: ${out}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, o.everyMs ?? 100));
  }
}
