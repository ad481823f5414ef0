/** A real Alertmanager (Debian's prometheus-alertmanager) on a free port, with a throwaway data dir. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinary } from './system-package.ts';
import { startDaemon } from './daemon.ts';

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
  const { url, stop } = await startDaemon('alertmanager', bin, dir, (port) => [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${dir}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--cluster.listen-address=',
  ]);
  return {
    url,
    async alerts() {
      return (await fetch(`${url}/api/v2/alerts`)).json();
    },
    stop,
  };
}
