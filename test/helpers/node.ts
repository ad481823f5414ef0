/**
 * Test harness: starts a whole node (broker, store, HTTP) on a free port with a temporary data dir,
 * and talks to it over HTTP like any client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../config/index.ts';
import { startNode, type NodeOptions, type RunningNode } from '../../app.ts';
import type { Mail, Mailer } from '../../lib/runtime/mail.ts';

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  key?: string;
  bearer?: string;
  headers?: Record<string, string>;
  /** send this raw text as the body */
  raw?: string;
}

export async function http<T = any>(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers['X-API-Key'] = opts.key;
  if (opts.bearer) headers.Authorization = `Bearer ${opts.bearer}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

/** Like http(), but returns the body and throws on a status of 300 or more (scripts, fixtures). */
export async function api<T = any>(baseUrl: string, method: string, path: string, body?: unknown, key?: string): Promise<T> {
  const res = await http<T>(baseUrl, method, path, { body, key });
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
  return res.body;
}

/** A mailer that keeps what it sends, for tests without an SMTP receiver. */
export class CapturingMailer implements Mailer {
  sent: Mail[] = [];
  async send(mail: Mail): Promise<void> {
    this.sent.push(mail);
  }
  codeFor(email: string): string | undefined {
    const mail = [...this.sent].reverse().find((m) => m.to === email.toLowerCase());
    return mail ? /\b(\d{6})\b/.exec(mail.text)?.[1] : undefined;
  }
  /** The code, once the mail outbox has delivered it (it leaves after the response, never on its path). */
  async waitForCode(email: string, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const code = this.codeFor(email);
      if (code) return code;
      if (Date.now() > deadline) throw new Error(`no verification code reached ${email}`);
      // unref'd: a wait that lost a race (Promise.any over two nodes' mailers) polls on until its deadline,
      // and must not hold the process (a jest worker) open after its test ended
      await new Promise((r) => setTimeout(r, 20).unref());
    }
  }
}

export interface TestNode {
  url: string;
  node: RunningNode;
  dataDir: string;
  mailer: CapturingMailer;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<HttpResult<T>>;
  /** calls an action on the node's broker (operator actions) */
  call<T = any>(action: string, params?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export function tempDir(prefix = 'pay-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestNode(env: Record<string, string> = {}, opts: NodeOptions & { keepData?: boolean } = {}): Promise<TestNode> {
  const dataDir = env.DATA_DIR ?? tempDir();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    POW_DIFFICULTY: '4',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '10000',
    REGISTRATION_EMAIL_LIMIT_PER_HOUR: '10000',
    REGISTRATION_DOMAIN_LIMIT_PER_HOUR: '100000',
    REGISTRATION_WRONG_CODES_PER_DAY: '10000',
    // tests that reconcile run it themselves (money-out.reconcile, treasury.reconcile)
    RECONCILE_INTERVAL_MS: '0',
    ...env,
    DATA_DIR: dataDir,
  });
  const mailer = opts.mailer instanceof CapturingMailer ? opts.mailer : new CapturingMailer();
  // with SMTP_URL the node sends real mail (to a receiver the test runs); otherwise mail is captured
  const node = await startNode(config, { defaultMetrics: false, ...opts, mailer: env.SMTP_URL ? undefined : (opts.mailer ?? mailer) });
  const api = node.broker.getLocalService('api') as unknown as { server?: { address(): AddressInfo } } | undefined;
  const port = api?.server?.address().port;
  const url = port ? `http://127.0.0.1:${port}` : '';
  return {
    url,
    node,
    dataDir,
    mailer,
    request: (method, path, o) => http(url, method, path, o),
    call: (action, params) => node.broker.call(action, params as object),
    async stop() {
      await node.stop();
      if (!opts.keepData && !env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
