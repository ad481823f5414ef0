/** A real Alertmanager (Debian's prometheus-alertmanager) on a free port, with a throwaway data dir. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { eventually } from './wait.ts';
import { ensureBinary } from './system-package.ts';

export interface Alertmanager {
  url: string;
  /** the alerts it holds now (GET /api/v2/alerts) */
  alerts(): Promise<Array<{ labels: Record<string, string>; annotations: Record<string, string>; startsAt: string; endsAt: string }>>;
  stop(): Promise<void>;
}

export async function startAlertmanager(): Promise<Alertmanager> {
  const bin = ensureBinary(['prometheus-alertmanager', 'alertmanager'], 'prometheus-alertmanager');
  const dir = mkdtempSync(join(tmpdir(), 'alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), 'route:\n  receiver: none\nreceivers:\n  - name: none\n');
  const port = await freePort();
  let out = '';
  const proc: ChildProcess = spawn(bin, [
    `--config.file=${join(dir, 'alertmanager.yml')}`, `--storage.path=${dir}`,
    `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address=',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d) => { out += d; });
  proc.stderr!.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  await eventually('alertmanager to answer', async () => {
    if (proc.exitCode !== null) throw new Error(`alertmanager exited ${proc.exitCode}: ${out}`);
    try {
      return (await fetch(`${url}/-/ready`)).status === 200;
    } catch {
      return false;
    }
  }, 60_000, 100);
  return {
    url,
    async alerts() {
      return (await fetch(`${url}/api/v2/alerts`)).json();
    },
    stop: () => new Promise<void>((resolve) => {
      const done = () => { rmSync(dir, { recursive: true, force: true }); resolve(); };
      if (proc.exitCode !== null) return done();
      proc.once('exit', done);
      proc.kill('SIGTERM');
    }),
  };
}
