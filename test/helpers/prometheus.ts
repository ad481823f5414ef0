/** A real Prometheus (Debian's `prometheus` package) on a free port, scraping the given targets. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBinary } from './system-package.ts';
import { startDaemon } from './daemon.ts';

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
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      `  scrape_interval: ${interval}`,
      `  evaluation_interval: ${interval}`,
      ...(rules ? ['rule_files:', rules] : []),
      'scrape_configs:',
      '  - job_name: payments',
      '    static_configs:',
      `      - targets: ${JSON.stringify(targets)}`,
      '',
    ].join('\n'),
  );
  const { url, stop } = await startDaemon('prometheus', bin, dir, (port) => [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ]);
  return {
    url,
    async query(q) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = (await res.json()) as {
        status: string;
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      if (body.status !== 'success') throw new Error(`query failed: ${JSON.stringify(body)}`);
      return body.data.result;
    },
    stop,
  };
}
