/** A real Prometheus (Debian's `prometheus` package) on a free port, scraping the given targets. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './ports.ts';
import { eventually } from './wait.ts';
import { ensureBinary } from './system-package.ts';

export interface Prometheus {
  url: string;
  /** an instant query; the result vector */
  query(q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
}

export const promtool = () => ensureBinary(['promtool'], 'prometheus');

export async function startPrometheus(targets: string[], opts: { ruleFiles?: string[]; intervalS?: number } = {}): Promise<Prometheus> {
  const bin = ensureBinary(['prometheus'], 'prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  const interval = `${opts.intervalS ?? 1}s`;
  const rules = (opts.ruleFiles ?? []).map((f) => `  - ${JSON.stringify(resolve(f))}`).join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), [
    'global:', `  scrape_interval: ${interval}`, `  evaluation_interval: ${interval}`,
    ...(rules ? ['rule_files:', rules] : []),
    'scrape_configs:', '  - job_name: payments', '    static_configs:', `      - targets: ${JSON.stringify(targets)}`, '',
  ].join('\n'));
  const port = await freePort();
  let out = '';
  const proc: ChildProcess = spawn(bin, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d) => { out += d; });
  proc.stderr!.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  await eventually('prometheus to answer', async () => {
    if (proc.exitCode !== null) throw new Error(`prometheus exited ${proc.exitCode}: ${out}`);
    try {
      return (await fetch(`${url}/-/ready`)).status === 200;
    } catch {
      return false;
    }
  }, 60_000, 100);
  return {
    url,
    async query(q) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = await res.json() as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      if (body.status !== 'success') throw new Error(`query failed: ${JSON.stringify(body)}`);
      return body.data.result;
    },
    stop: () => new Promise<void>((done) => {
      const finish = () => { rmSync(dir, { recursive: true, force: true }); done(); };
      if (proc.exitCode !== null) return finish();
      proc.once('exit', finish);
      proc.kill('SIGTERM');
    }),
  };
}
