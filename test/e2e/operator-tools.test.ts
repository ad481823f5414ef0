/** Operator tools act on the running service's store, effective without a restart. */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant } from '../helpers/merchant.ts';

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

  it("lists a merchant's sessions newest first, with a status or without", async () => {
    const m = await registerMerchant(t, { sandbox: true });
    const ids: string[] = [];
    for (const amount of [1, 2, 3, 4]) {
      const r = await t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { amount, expires_in: '1h', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } },
      });
      expect(r.status).toBe(201);
      ids.push(r.body.session_id);
    }
    for (const id of [ids[0], ids[2]])
      expect((await t.request('POST', `/v1/payment_sessions/${id}/simulate`, { key: m.apiKey })).status).toBe(200);
    const all = await t.call<{ sessions: Array<{ session_id: string; status: string }> }>('ops.sessions', { merchant_id: m.id });
    expect(all.sessions.map((s) => s.session_id)).toEqual([...ids].reverse());
    const simulated = all.sessions.find((s) => s.session_id === ids[0])!.status;
    expect(simulated).not.toBe('pending');
    const paid = await t.call<{ sessions: Array<{ session_id: string }> }>('ops.sessions', { merchant_id: m.id, status: simulated });
    expect(paid.sessions.map((s) => s.session_id)).toEqual([ids[2], ids[0]]);
    const pending = await t.call<{ sessions: Array<{ session_id: string }> }>('ops.sessions', { merchant_id: m.id, status: 'pending' });
    expect(pending.sessions.map((s) => s.session_id)).toEqual([ids[3], ids[1]]);
    const two = await t.call<{ sessions: unknown[] }>('ops.sessions', { merchant_id: m.id, limit: 2 });
    expect(two.sessions).toHaveLength(2);
  });

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
