/**
 * Backups of the embedded store with the operator tool, as an operator runs them: `npm run operator --
 * backup <file>` while the service takes on-chain money (Hardhat, TestUSDC) and a write load of sessions
 * and simulations; `restore <file>` refused while a service holds the data dir and when the data dir's key
 * material is not the backup's; then restored into a fresh data dir, a service started on it, and the
 * ledger check and the reconciliation against the chain run clean on the copy.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DatabaseSync } from 'node:sqlite';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';
import { KeyDeriver } from '../../lib/chains/keys.ts';
import { gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(300_000);
const exec = promisify(execFile);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('operator backup and restore of the embedded store', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let a: TestNode;
  let m: RegisteredMerchant;
  let chainEnv: Record<string, string>;
  const dirA = tempDir('pay-backup-a-');
  const dirB = tempDir('pay-backup-b-');
  const out = tempDir('pay-backup-files-');
  const file = join(out, 'store.backup');

  const operator = (dataDir: string, ...args: string[]): Promise<Run> =>
    exec(process.execPath, ['scripts/operator.ts', ...args], {
      env: { ...process.env, ...chainEnv, DATA_DIR: dataDir, LOG_LEVEL: 'error' },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  beforeAll(async () => {
    eth = await startHardhatNode();
    usdc = await eth.deployTestUsdc();
    await usdc.mint(eth.accounts[1]!.address, 1_000_000_000n);
    chainEnv = {
      ETHEREUM_TESTNET_RPC_URL: eth.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: '100',
      BROADCAST_POLL_INTERVAL_MS: '100',
      SESSION_SCAN_INTERVAL_MS: '100',
    };
    a = await startTestNode({ ...chainEnv, DATA_DIR: dirA });
    m = await merchant(a);
    const keys = new KeyDeriver(loadSeedPhrase(dirA, {}).phrase);
    await eth.setBalance(keys.address(gasWalletRef('ethereum', 'testnet')), 10n ** 19n);
  }, 180_000);

  afterAll(async () => {
    await a?.stop();
    await eth?.stop();
    for (const d of [dirA, dirB, out]) rmSync(d, { recursive: true, force: true });
  });

  it('backs up under write load, refuses unsafe restores, and the restored copy checks clean against the chain', async () => {
    // real money on chain: a session paid in USDC, swept into the merchant's wallet, available
    const paid = await createSession(a, m, RAILS.ethUsdc, 10);
    await usdc.transfer(1, paid.address, 10_000_000n);
    await sessionWhen(a, m, paid.session_id, 'completion', (x) => x.status === 'completed');
    const wallet = await until(
      'the settlement swept and available',
      async () => {
        const { data } = (await a.request('GET', '/v1/wallets?limit=100', { key: m.apiKey })).body;
        const w = data.find((x: any) => x.chain === 'ethereum' && x.network === 'testnet');
        const usdcBal = w?.balances.find((b: any) => b.token === 'USDC');
        return usdcBal?.available_subunits === '10000000' && (await usdc.balanceOf(paid.address)) === 0n ? w : null;
      },
      90_000,
    );

    // the write load: sessions created and simulated (ledger transfers, webhook rows, audit rows) without pause
    let stop = false;
    const written: string[] = [];
    const worker = async () => {
      while (!stop) {
        const s = await a.request('POST', '/v1/payment_sessions', {
          key: m.apiKey,
          body: { amount: 1, expires_in: '1h', paymentMethod: RAILS.ethUsdc },
        });
        if (s.status !== 201) throw new Error(`load: ${s.status} ${s.text}`);
        const sim = await a.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey });
        if (sim.status !== 200) throw new Error(`load: simulate ${sim.status} ${sim.text}`);
        written.push(s.body.session_id);
      }
    };
    const load = Promise.all([worker(), worker(), worker(), worker()]);
    await until('some load before the backup', () => written.length >= 200, 120_000);

    const before = written.length;
    const backup = await operator(dirA, 'backup', file);
    const after = written.length;
    stop = true;
    await load;
    expect(backup).toMatchObject({ code: 0 });
    expect(backup.stdout).toMatch(/^backup written: .*store\.backup \(\d+ bytes; \d+ merchants, \d+ payment_sessions/);
    // writes went on while the copy was taken
    expect(after).toBeGreaterThan(before);
    console.log(`backup under load: ${backup.stdout.split('\n')[0]}; ${after - before} sessions completed by the load during it`);

    // the copy is one committed state: everything answered before it began, nothing beyond what the load wrote
    const copy = new DatabaseSync(file, { readOnly: true });
    const ids = new Set((copy.prepare('SELECT id FROM payment_sessions').all() as Array<{ id: string }>).map((r) => r.id));
    const copied = (copy.prepare('SELECT count(*) AS n FROM payment_sessions').get() as { n: number }).n;
    const completed = (
      copy.prepare("SELECT count(*) AS n FROM payment_sessions WHERE json_extract(data, '$.status') = 'completed'").get() as { n: number }
    ).n;
    copy.close();
    for (const id of [paid.session_id, ...written.slice(0, before)]) expect(ids.has(id)).toBe(true);
    expect(copied).toBeLessThanOrEqual(written.length + 1 + 4); // + the paid session, + sessions of the 4 workers in flight

    // never over an existing file
    expect((await operator(dirA, 'backup', file)).stderr).toMatch(/already exists/);
    // never into a data dir a service holds
    const held = await operator(dirA, 'restore', file);
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/is open in another process .*stop the service/);
    // never without the key material the backup's addresses and sealed secrets need; nothing changes
    const keyless = await operator(dirB, 'restore', file);
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toMatch(/no seed: copy the original .*seed.*no master key: copy the original .*master\.key/);
    expect(existsSync(join(dirB, 'service.db'))).toBe(false);

    await a.stop();
    // the operator restores the key material from where it is kept, then the store
    copyFileSync(join(dirA, 'seed'), join(dirB, 'seed'));
    copyFileSync(join(dirA, 'master.key'), join(dirB, 'master.key'));
    const restored = await operator(dirB, 'restore', file);
    expect(restored).toMatchObject({ code: 0 });
    expect(restored.stdout).toMatch(/^restored .*store\.backup into .*service\.db/);

    const b = await startTestNode({ ...chainEnv, DATA_DIR: dirB });
    try {
      // the restored service knows the merchant's key, the paid session and the wallet's money
      const s = await b.request('GET', `/v1/payment_sessions/${paid.session_id}`, { key: m.apiKey });
      expect(s.body).toMatchObject({ status: 'completed', received_amount_subunits: '10000000' });
      // the wallet holds what the copy's completed sessions brought: 10 USDC on chain + 1 simulated USDC each
      const w = (await b.request('GET', `/v1/wallets/${wallet.id}`, { key: m.apiKey })).body;
      expect(w.balances.find((x: any) => x.token === 'USDC')).toMatchObject({
        available_subunits: String(10_000_000 + (completed - 1) * 1_000_000),
      });

      const ledger = await operator(dirB, 'ledger:check');
      expect(ledger.code).toBe(0);
      expect(ledger.stdout).toMatch(/^ledger ok: /);
      const reconcile = await operator(dirB, 'reconcile');
      expect(reconcile.code).toBe(0);
      const report = JSON.parse(reconcile.stdout);
      expect(report.differences).toEqual([]);
      expect(report.checked).toBeGreaterThanOrEqual(2); // the wallet's USDC and ETH against Hardhat
      console.log(`restored copy: ${ledger.stdout.trim()}; reconcile checked ${report.checked}, ${report.differences.length} differences`);

      // and the restored data dir is held by its service now
      expect((await operator(dirB, 'restore', file)).stderr).toMatch(/is open in another process/);
    } finally {
      await b.stop();
    }
  });
});
