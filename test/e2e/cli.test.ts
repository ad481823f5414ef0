/**
 * The `payments` CLI (sdk/bin/payments.ts) as a subprocess against a started node: register with the
 * emailed code typed on stdin, sessions, events, resend, listen forwarding signed events to a local
 * server that verifies them, trigger, payouts, wallets, rates, login, and the exit codes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { freePort } from '../helpers/ports.ts';
import { verifyWebhook } from '../../sdk/src/webhooks.ts';

const BIN = resolve('sdk/bin/payments.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string>): { child: ChildProcess; out: Run; done: Promise<Run> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Run = { code: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  const done = new Promise<Run>((resolveRun) =>
    child.on('close', (code) => {
      out.code = code;
      resolveRun(out);
    }),
  );
  return { child, out, done };
}

function cli(args: string[], env: Record<string, string>, input?: string): Promise<Run> {
  const p = start(args, env);
  p.child.stdin!.end(input ?? '');
  return p.done;
}

interface Hook {
  raw: string;
  eventId: string;
  signature: string;
}

function hookServer(answer: (raw: string, signature: string) => number) {
  const hooks: Hook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const signature = String(req.headers['x-service-signature'] ?? '');
      hooks.push({ raw, eventId: String(req.headers['x-service-event-id'] ?? ''), signature });
      res.writeHead(answer(raw, signature));
      res.end();
    });
  });
  return {
    hooks,
    listen: (port = 0) =>
      new Promise<string>((r) =>
        server.listen(port, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`)),
      ),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** SIGKILL to a process group that may already be gone */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

describe('payments CLI against a started node', () => {
  let smtp: SmtpReceiver;
  let t: TestNode;
  let dir: string;
  let env: Record<string, string>;
  const production = hookServer(() => 204);
  let productionUrl = '';
  let apiKey = '';
  let secret = '';

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    productionUrl = await production.listen();
    t = await startTestNode({
      SMTP_URL: smtp.url,
      TRUSTED_EMAIL_DOMAINS: 'cli.test',
      POW_DIFFICULTY: '14',
      EVENTS_POLL_INTERVAL_MS: '50',
      RATE_LIMIT_PER_MINUTE: '10000',
      SESSION_SCAN_INTERVAL_MS: '200',
      RATE_SOURCES: '*=static',
      RATES_STATIC: 'USDC:USD=1,ETH:USD=3000.25,SOL:USD=150',
    });
    dir = mkdtempSync(join(tmpdir(), 'payments-cli-'));
    env = { PAYMENTS_CONFIG: join(dir, 'config.json'), PAYMENTS_BASE_URL: t.url };
  });
  afterAll(async () => {
    await t.stop();
    await smtp.stop();
    await production.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--help everywhere; usage errors exit 2; no key exits 4', async () => {
    for (const args of [
      ['--help'],
      ['sessions', 'create', '--help'],
      ['listen', '--help'],
      ['events', 'resend', '--help'],
      ['trigger', '--help'],
      ['payouts', 'create', '--help'],
      ['wallets', 'list', '--help'],
      ['rates', '--help'],
      ['register', '--help'],
      ['login', '--help'],
    ]) {
      const r = await cli(args, env);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: payments/);
    }
    expect((await cli(['nope'], env)).code).toBe(2);
    expect((await cli(['sessions', 'create'], env)).code).toBe(2);
    const noKey = await cli(['sessions', 'list'], env);
    expect(noKey.code).toBe(4);
    expect(noKey.stderr).toMatch(/no API key/);
  });

  it('register: the code typed on stdin, a progress indicator while the proof of work runs, credentials in a 0600 file and never printed', async () => {
    const email = `cli${Date.now()}@cli.test`;
    const p = start(['register', '--email', email, '--name', 'CLI Shop', '--webhook-url', productionUrl], env);
    await eventually('the code prompt', () => /Enter the 6-digit code sent to/.test(p.out.stderr));
    p.child.stdin!.end(`${await smtp.waitForCode(email)}\n`);
    const r = await p.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Solving the proof of work/);
    expect(r.stdout).toMatch(/mer_/);
    expect(statSync(env.PAYMENTS_CONFIG).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(env.PAYMENTS_CONFIG, 'utf8')).profiles.default;
    apiKey = saved.api_key;
    secret = saved.webhook_secret;
    expect(apiKey).toMatch(/^service_sk_test_/);
    expect(secret).toBeTruthy();
    expect(r.stdout + r.stderr).not.toContain(apiKey);
    expect(r.stdout + r.stderr).not.toContain(secret);
  });

  it('sessions create|get|list|simulate, tables and --json, typed exit codes', async () => {
    const created = await cli(
      ['--json', 'sessions', 'create', '--amount', '2.5', '--metadata', '{"order":"A-7"}', '--idempotency-key', 'cli-order-7'],
      env,
    );
    expect(created.code).toBe(0);
    const s = JSON.parse(created.stdout);
    expect(s).toMatchObject({ status: 'pending', expected_amount: 2.5, metadata: { order: 'A-7' } });
    const shown = await cli(['sessions', 'get', s.session_id], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`session_id\\s+${s.session_id}`));
    const listed = await cli(['sessions', 'list'], env);
    expect(listed.stdout.split('\n')[0]).toMatch(/^SESSION_ID\s+STATUS\s+EXPECTED_AMOUNT/);
    expect(listed.stdout).toContain(s.session_id);
    const simulated = await cli(['--json', 'sessions', 'simulate', s.session_id], env);
    expect(JSON.parse(simulated.stdout).status).toBe('completed');
    const hook = await eventually('the production webhook', () =>
      production.hooks.find((h) => JSON.parse(h.raw).session_id === s.session_id),
    );
    expect(verifyWebhook(hook.raw, hook.signature, secret)).toBe(true);

    // exit codes scripts can test
    expect((await cli(['sessions', 'create', '--amount', '2.5', '--idempotency-key', 'cli-order-7'], env)).code).toBe(6);
    expect((await cli(['sessions', 'create', '--amount', '0.0000001'], env)).code).toBe(3);
    const missing = await cli(['--json', 'sessions', 'get', 'ps_00000000000000000000000000'], env);
    expect(missing.code).toBe(5);
    expect(JSON.parse(missing.stderr)).toEqual({
      error: {
        message: expect.any(String),
        code: 2,
        status: 404,
        remediation: expect.any(String),
        request_id: expect.stringMatching(/^req_/),
        retryable: false,
      },
    });
    // people read the fix and the id to quote
    const missingText = await cli(['sessions', 'get', 'ps_00000000000000000000000000'], env);
    expect(missingText.stderr).toMatch(/^Error: .*not found\n {2}fix: .+\n {2}request id: req_\w+\n$/);
    const closed = await freePort(); // nothing listens there
    const unreachable = await cli(['sessions', 'list'], { ...env, PAYMENTS_BASE_URL: `http://127.0.0.1:${closed}` });
    expect(unreachable.stderr).toContain(`could not reach http://127.0.0.1:${closed}/v1/payment_sessions (GET: ECONNREFUSED)`);
    expect((await cli(['sessions', 'list'], { ...env, PAYMENTS_API_KEY: 'service_sk_test_wrong' })).code).toBe(4);
    expect(unreachable.code).toBe(8);

    // events list and resend
    const events = await cli(['--json', 'events', 'list', '--type', 'payment_session.completed'], env);
    const evt = JSON.parse(events.stdout).data.find((e: { session_id: string }) => e.session_id === s.session_id);
    expect(evt.id).toBe(hook.eventId);
    const table = await cli(['events', 'list'], env);
    expect(table.stdout).toMatch(new RegExp(`${evt.id}\\s+payment_session.completed\\s+${s.session_id}`));
    const before = production.hooks.filter((h) => h.eventId === evt.id).length;
    const resent = await cli(['events', 'resend', evt.id], env);
    expect(resent.code).toBe(0);
    expect(resent.stdout).toMatch(/delivered; last attempt 204/);
    expect(production.hooks.filter((h) => h.eventId === evt.id).length).toBe(before + 1);
  }, 180_000);

  it('listen forwards each event signed with the webhook secret to a local server that verifies it; trigger makes events', async () => {
    let verified = 0;
    const local = hookServer((raw, signature) => {
      try {
        verifyWebhook(raw, signature, secret);
        verified++;
        return 200;
      } catch {
        return 400;
      }
    });
    const url = await local.listen();
    const listener = start(['listen', '--forward-to', url], env);
    try {
      await eventually('listen ready', () => /Ready: forwarding events to/.test(listener.out.stderr));
      const trig = await cli(['--json', 'trigger', 'payment_session.completed', '--amount', '1.25'], env);
      expect(trig.code).toBe(0);
      const event = JSON.parse(trig.stdout);
      expect(event).toMatchObject({ event_type: 'payment_session.completed', status: 'completed', amount: 1.25 });
      const got = await eventually('the forwarded event', () => local.hooks.find((h) => h.eventId === event.id));
      expect(JSON.parse(got.raw)).toEqual(Object.fromEntries(Object.entries(event).filter(([k]) => k !== 'id' && k !== 'created_at')));
      // the local handler sees the bytes production sends
      const prod = await eventually('the production copy', () => production.hooks.find((h) => h.eventId === event.id));
      expect(got.raw).toBe(prod.raw);
      await eventually('the printed line', () => new RegExp(`payment_session.completed  ${event.id}  -> 200`).test(listener.out.stdout));

      const payout = await cli(['--json', 'trigger', 'payout.completed', '--amount', '0.5'], env);
      expect(payout.code).toBe(0);
      const pe = JSON.parse(payout.stdout);
      expect(pe).toMatchObject({ event_type: 'payout.completed', status: 'completed', amount: 0.5 });
      await eventually('the forwarded payout event', () => local.hooks.find((h) => h.eventId === pe.id));
      expect(verified).toBe(local.hooks.length);

      const expired = await cli(['--json', 'trigger', 'payment_session.expired'], env);
      expect(expired.code).toBe(0);
      expect(JSON.parse(expired.stdout)).toMatchObject({ event_type: 'payment_session.expired', status: 'expired' });
      await eventually('three forwarded', () => local.hooks.length >= 3);
      expect((await cli(['trigger', 'payment_session.partial_paid'], env)).code).toBe(2);

      // payouts and wallets
      const got2 = await cli(['--json', 'payouts', 'get', pe.payout_id], env);
      expect(JSON.parse(got2.stdout)).toMatchObject({ id: pe.payout_id, status: 'completed' });
      const wallets = await cli(['--json', 'wallets', 'list'], env);
      const wallet = JSON.parse(wallets.stdout).data.find(
        (w: { is_default: boolean; chain: string }) => w.is_default && w.chain === 'ethereum',
      );
      expect(wallet).toBeTruthy();
      const walletsTable = await cli(['wallets', 'list'], env);
      expect(walletsTable.stdout).toContain(wallet.id);
      const paid = await cli(
        [
          '--json',
          'payouts',
          'create',
          '--wallet',
          wallet.id,
          '--amount',
          '0.25',
          '--token',
          'USDC',
          '--destination',
          '0x000000000000000000000000000000000000dEaD',
        ],
        env,
      );
      expect(paid.code).toBe(0);
      expect(JSON.parse(paid.stdout)).toMatchObject({ status: 'completed', amount: 0.25 });
      const payoutId = JSON.parse(paid.stdout).id as string;
      // sandbox money: the table and the details say the payout was simulated, nothing sent on chain
      const list = await cli(['payouts', 'list'], env);
      expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+SIMULATED\s+AMOUNT/);
      expect(list.stdout).toMatch(new RegExp(`${payoutId}\\s+completed\\s+yes\\s+0.25`));
      expect(list.stderr).toMatch(/simulated: sandbox money, nothing was sent on chain/);
      expect((await cli(['payouts', 'get', payoutId], env)).stdout).toMatch(/simulated\s+yes: sandbox, nothing sent/);
      const tooMuch = await cli(
        [
          'payouts',
          'create',
          '--wallet',
          wallet.id,
          '--amount',
          '1000',
          '--token',
          'USDC',
          '--destination',
          '0x000000000000000000000000000000000000dEaD',
        ],
        env,
      );
      expect(tooMuch.code).toBe(6);
    } finally {
      listener.child.kill('SIGINT');
      const r = await listener.done;
      expect(r.code).toBe(0);
      await local.close();
    }
  }, 180_000);

  it('listen keeps an event the endpoint refused and forwards it once the endpoint is up (it may start after listen)', async () => {
    const port = await freePort(); // the endpoint is not running yet
    const listener = start(['listen', '--forward-to', `http://127.0.0.1:${port}/hooks`], env);
    const local = hookServer(() => 204);
    try {
      await eventually('listen ready', () => /Ready: forwarding events to/.test(listener.out.stderr));
      const trig = await cli(['--json', 'trigger', 'payment_session.completed'], env);
      const event = JSON.parse(trig.stdout);
      await eventually('the refusal reported', () =>
        new RegExp(`127.0.0.1:${port}/hooks refused ${event.id} \\(is your endpoint running\\?\\); trying again in`).test(
          listener.out.stderr,
        ),
      );
      expect(listener.out.stdout).not.toContain(event.id); // not given up on
      await local.listen(port);
      const got = await eventually('the event, once the endpoint listens', () => local.hooks.find((h) => h.eventId === event.id));
      expect(verifyWebhook(got.raw, got.signature, secret)).toBe(true);
      await eventually('the printed line', () => new RegExp(`payment_session.completed  ${event.id}  -> 204`).test(listener.out.stdout));
      expect(local.hooks.filter((h) => h.eventId === event.id)).toHaveLength(1);
    } finally {
      listener.child.kill('SIGINT');
      expect((await listener.done).code).toBe(0);
      await local.close();
    }
  });

  it('npx payments listen ends with 0 on Ctrl-C, which a terminal sends to the whole process group', async () => {
    const local = hookServer(() => 204);
    const url = await local.listen();
    // as typed in the README: through npx (npm, its shell, then the CLI), all in one process group
    const child = spawn('npx', ['payments', 'listen', '--forward-to', url], {
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await eventually('listen ready', () => /Ready: forwarding events to/.test(stderr), 60_000);
      process.kill(-child.pid!, 'SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/Stopped\./);
    } finally {
      // the group may be gone before its exit is seen here (exitCode stays null after an exit by a signal):
      // a kill that finds nobody (ESRCH) must not hide the assertion that failed
      if (child.exitCode === null) killGroup(child.pid!);
      await local.close();
    }
  });

  it('rates, and login storing a key read from stdin in a 0600 file without echoing it', async () => {
    const rates = await cli(['rates'], env);
    expect(rates.code).toBe(0);
    expect(rates.stdout.split('\n')[0]).toMatch(/^BASE\s+QUOTE\s+RATE/);
    expect(rates.stdout).toMatch(/ETH\s+USD\s+3000.25\s+static/);
    const other = join(dir, 'other.json');
    const login = await cli(
      ['login', '--with-webhook-secret'],
      { PAYMENTS_CONFIG: other, PAYMENTS_BASE_URL: t.url },
      `${apiKey}\n${secret}\n`,
    );
    expect(login.code).toBe(0);
    expect(login.stdout).toMatch(/Logged in as CLI Shop/);
    // what to try next, on stderr (stdout stays the result)
    expect(login.stderr).toMatch(/Next, try:\n {2}npx payments trigger .*\n {2}npx payments listen .*\n {2}eval "\$\(npx payments env\)"/);
    expect(login.stdout + login.stderr).not.toContain(apiKey);
    expect(statSync(other).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(other, 'utf8')).profiles.default).toMatchObject({
      api_key: apiKey,
      webhook_secret: secret,
      base_url: t.url,
    });
    const bad = await cli(['login'], { PAYMENTS_CONFIG: join(dir, 'bad.json'), PAYMENTS_BASE_URL: t.url }, 'service_sk_test_nope\n');
    expect(bad.code).toBe(4);
  });
});
