/**
 * The operations commands in the REPL (`npm run repl`) on the running service's store: alerts, a
 * merchant's sessions, listener leases, audit and its verification.
 */
import { spawn } from 'node:child_process';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { eventually } from '../helpers/wait.ts';

jest.setTimeout(180_000);

describe('operations commands in the REPL', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ SESSION_AMOUNT_LIMIT: '100', AUDIT_SEAL_INTERVAL_MS: '50' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('lists alerts, sessions, listeners and audit, and verifies the chains', async () => {
    const m = await merchant(t);
    const ok = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 5, expires_in: '1h', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } },
    });
    expect(ok.status).toBe(201);
    const over = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 101, expires_in: '1h', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } },
    });
    expect(over.status).toBe(400);

    const child = spawn(process.execPath, ['scripts/repl.ts'], {
      env: { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'error' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    try {
      await eventually('the REPL prompt', () => out.includes('payments $'), 60_000, 50);
      const ask = async (line: string, expectText: string | RegExp) => {
        const from = out.length;
        child.stdin.write(`${line}\n`);
        await eventually(
          `the answer to ${line}`,
          () => {
            const tail = out.slice(from);
            return typeof expectText === 'string' ? tail.includes(expectText) : expectText.test(tail);
          },
          60_000,
          50,
        );
        return out.slice(from);
      };
      const alerts = await ask('alerts limit_violation', '"alert_type": "limit_violation"');
      expect(alerts).toContain(`"merchant_id": "${m.id}"`);
      expect(alerts).toContain('"last_error_code": "amount_limit_exceeded"');
      const sessions = await ask(`sessions ${m.id}`, `"session_id": "${ok.body.session_id}"`);
      expect(sessions).toContain('"expected": "5 USDC"');
      await ask('listeners', '"listeners"');
      await ask(`audit ${m.id}`, '"type": "merchant.registered"');
      await ask(`audit-verify ${m.id}`, '"ok": true');
      child.stdin.write('quit\n');
      await new Promise((r) => child.once('exit', r));
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
