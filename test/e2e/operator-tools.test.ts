/** Operator tools act on the running service's store, effective without a restart. */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../helpers/node.ts';

const run = promisify(execFile);

describe('operator script and REPL', () => {
  let t: TestNode;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestNode();
    env = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'error' };
  });
  afterAll(async () => {
    await t.stop();
  });

  const operator = async (...args: string[]) => JSON.parse((await run(process.execPath, ['scripts/operator.ts', ...args], { env })).stdout);

  it('trusts a domain, creates a user and sets KYC while the service runs', async () => {
    const email = 'owner@live-ops.example';
    const untrusted = await t.request('POST', '/v1/merchants/email-verification', { body: { email } });
    // an untrusted address gets the same answer and an outbox row that is never sent
    const mails = await t.node.rt.store.find<{ id: string; status: string }>('mail_outbox', {});
    expect(mails.map((m) => m.status)).toEqual(['suppressed']);
    expect(untrusted.status).toBe(200);
    expect(t.mailer.codeFor(email)).toBeUndefined();
    expect(await operator('trust-domain', 'live-ops.example')).toEqual({ trusted_domains: 'live-ops.example', trusted: true });
    await t.request('POST', '/v1/merchants/email-verification', { body: { email } });
    expect(await t.mailer.waitForCode(email)).toMatch(/^\d{6}$/);

    const user = await operator('create-user', 'ops@live-ops.example');
    expect(user.bearer_token).toMatch(/^usr_/);
    const reg = await t.request('POST', '/v1/merchants', { bearer: user.bearer_token, body: { name: 'Live' } });
    expect(reg.status).toBe(201);
    expect(await operator('set-kyc', reg.body.id, 'verified')).toEqual({ merchant_id: reg.body.id, kyc_status: 'verified' });
    const me = await t.request('GET', '/v1/me', { key: reg.body.api_key });
    expect(me.body.kyc_status).toBe('verified');
    // three operator processes, each loading the service's modules: minutes on a loaded 2-core machine
  }, 180_000);

  it('refuses bad operator input with a message and exit code 1', async () => {
    await expect(run(process.execPath, ['scripts/operator.ts', 'set-kyc', 'mer_nope', 'maybe'], { env })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/status must be one of/),
    });
  });

  it('reconcile:ack of a drift id that is not on record answers 404 and records nothing', async () => {
    const unknown = 'drf_0123456789abcdef0123456789';
    const params = { drift_id: unknown, reason: 'checked by hand', by: 'ops-oncall' };
    await expect(t.call('treasury.ackDrift', params)).rejects.toMatchObject({ code: 404, message: `drift ${unknown} not found` });
    await expect(
      run(process.execPath, ['scripts/operator.ts', 'reconcile:ack', unknown, '--reason', 'checked by hand', '--by', 'ops-oncall'], {
        env,
      }),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`error: drift ${unknown} not found`) });
    const { events } = await t.call<{ events: unknown[] }>('ops.audit', { type: 'operator.reconciliation_drift.acknowledged' });
    expect(events).toEqual([]);
  });

  it('runs the same commands in the REPL', async () => {
    const child = spawn(process.execPath, ['scripts/repl.ts'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    const deadline = Date.now() + 20_000;
    while (!out.includes('payments $') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.write('trust-email vip@gmail.com\n');
    while (!out.includes('"trusted": true') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.write('quit\n');
    await new Promise((r) => child.once('exit', r));
    expect(out).toContain('"trusted_emails": "vip@gmail.com"');
    await t.request('POST', '/v1/merchants/email-verification', { body: { email: 'vip@gmail.com' } });
    expect(await t.mailer.waitForCode('vip@gmail.com')).toMatch(/^\d{6}$/);
  });
});
