/**
 * A node of the service as its own process (`node index.ts`), so a test sees exactly what an operator
 * sees: its stdout and stderr (captured), its HTTP port, and its exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ExitedBeforeListening, freePort, untilListening } from './ports.ts';

export interface ChildNode {
  proc: ChildProcess;
  url: string;
  port: number;
  /** everything the process wrote to stdout and stderr so far */
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** argv that runs the node inside something (`ip netns exec <ns>`: test/helpers/netns.ts) */
  wrap?: string[];
  /** the address the node listens on and the test reaches it at (default 127.0.0.1, a free port) */
  host?: string;
  port?: number;
}

export async function spawnNode(env: Record<string, string>, opts: SpawnOptions = {}): Promise<ChildNode> {
  // a port picked here may be taken by a parallel test before the child binds it: then pick another
  for (let attempt = 1; ; attempt++) {
    const node = await start(env, opts);
    if (node) return node;
    if (opts.port !== undefined || attempt === 3) throw new Error(`the child node found its port taken ${attempt} times`);
  }
}

/** null: the port was taken by someone else first (the child exited with EADDRINUSE) */
async function start(env: Record<string, string>, opts: SpawnOptions): Promise<ChildNode | null> {
  const port = opts.port ?? (await freePort());
  const host = opts.host ?? '127.0.0.1';
  let out = '';
  const [cmd, ...args] = [...(opts.wrap ?? []), process.execPath, 'index.ts'];
  const proc = spawn(cmd, args, {
    cwd: process.cwd(),
    env: {
      ...process.env,
      PORT: String(port),
      HOST: host,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'info',
      POW_DIFFICULTY: '4',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => {
    out += d;
  });
  proc.stderr!.on('data', (d) => {
    out += d;
  });
  const url = `http://${host}:${port}`;
  try {
    await untilListening('the child node', proc, port, async () => (await fetch(`${url}/v1/payment_methods`)).status === 200, {
      output: () => out,
    });
  } catch (e) {
    if (e instanceof ExitedBeforeListening && e.output.includes('EADDRINUSE')) return null;
    throw e;
  }
  return {
    proc,
    url,
    port,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
      }),
  };
}
