/** A server binary (Prometheus, Alertmanager) on a free port of 127.0.0.1, ready once GET /-/ready answers 200. */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { freePort, untilListening } from './ports.ts';

export interface Daemon {
  url: string;
  /** kills the process and removes its throwaway dir */
  stop(): Promise<void>;
}

export async function startDaemon(name: string, bin: string, dir: string, args: (port: number) => string[]): Promise<Daemon> {
  const port = await freePort();
  let out = '';
  const proc: ChildProcess = spawn(bin, args(port), { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d) => {
    out += d;
  });
  proc.stderr!.on('data', (d) => {
    out += d;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilListening(name, proc, port, async () => (await fetch(`${url}/-/ready`)).status === 200, { output: () => out });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true }); // a start that failed leaves no directory behind either
    throw e;
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (proc.exitCode !== null) return done();
        proc.once('exit', done);
        proc.kill('SIGTERM');
      }),
  };
}
