/**
 * A real NATS server for multi-node tests: the one on 127.0.0.1:4222 when it answers, otherwise one
 * started here (Debian's nats-server) on a free port and stopped when the test process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, untilListening } from './ports.ts';
import { reapWith } from './reaper.ts';

export { freePort };
import { existsSync } from 'node:fs';

let started: ChildProcess | null = null;
let url: string | null = null;

function answers(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    // a NATS server greets with INFO
    s.once('data', (d) => done(d.toString().startsWith('INFO')));
    s.once('error', () => done(false));
  });
}

export async function ensureNats(): Promise<string> {
  if (url) return url;
  if (await answers(4222)) return (url = 'nats://127.0.0.1:4222');
  const bin = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find(existsSync);
  if (!bin)
    throw new Error(
      'multi-node tests need NATS: no server answers on 127.0.0.1:4222 and no nats-server binary is installed; install it (Debian: apt-get install nats-server; .ci/run does)',
    );
  const port = await freePort();
  started = spawn(bin, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  process.once('exit', () => started?.kill('SIGKILL'));
  reapWith(started);
  await untilListening('nats-server', started, port, () => answers(port), { timeoutMs: 10_000 });
  return (url = `nats://127.0.0.1:${port}`);
}

/** Stops a server this process started (the shared one on 4222 is left alone). */
export async function stopNats(): Promise<void> {
  if (started) {
    started.kill('SIGTERM');
    started = null;
    url = null;
  }
}

/**
 * A dedicated nats-server for one test (e.g. with `--user`/`--pass`), on a free port; stopped by the
 * returned function or when the test process exits. `listen`: the address it listens on (default
 * 127.0.0.1; 0.0.0.0 for nodes in other network namespaces, test/helpers/netns.ts).
 */
export async function startNatsServer(args: string[] = [], listen = '127.0.0.1'): Promise<{ url: string; port: number; stop(): void }> {
  const bin = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find(existsSync);
  if (!bin) throw new Error('no nats-server binary (apt-get install nats-server)');
  const port = await freePort();
  const child = spawn(bin, ['-a', listen, '-p', String(port), ...args], { stdio: 'ignore' });
  const stop = () => child.kill('SIGKILL');
  process.once('exit', stop);
  reapWith(child);
  await untilListening('nats-server', child, port, () => answers(port), { timeoutMs: 10_000, onTimeout: stop });
  return { url: `nats://127.0.0.1:${port}`, port, stop };
}
