import net from 'node:net';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { registerMerchant } from '../helpers/merchant.ts';
import { solvePow } from '../../lib/onboarding/pow.ts';
import { commitEvent, waitForEvent } from './webhooks-helpers.ts';

/** The four registration steps, returning the last answer whatever it is. */
async function tryRegister(t: TestNode, webhookUrl: string) {
  const email = `ssrf${Date.now()}${Math.random().toString(36).slice(2, 8)}@trusted.test`;
  await t.call('operators.trustDomain', { value: 'trusted.test' });
  const start = await t.request('POST', '/v1/merchants/email-verification', { body: { email } });
  const intent = start.body.registration_intent_id;
  await t.request('POST', '/v1/merchants/email-verification/confirm', {
    body: { registration_intent_id: intent, code: await t.mailer.waitForCode(email) },
  });
  const pow = await t.request('POST', '/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: intent } });
  return t.request('POST', '/v1/merchants', {
    body: {
      name: 'SSRF Shop',
      sandbox: true,
      registration_intent_id: intent,
      webhook_url: webhookUrl,
      proof_of_work_challenge_id: pow.body.challenge_id,
      proof_of_work_nonce: solvePow(pow.body.challenge, pow.body.difficulty),
    },
  });
}

/** A TCP listener that only counts connections: proof that nothing was dialled. */
async function tcpCounter() {
  const c = {
    connections: 0,
    port: 0,
    server: net.createServer((s) => {
      c.connections++;
      s.destroy();
    }),
  };
  await new Promise<void>((r) => c.server.listen(0, '127.0.0.1', r));
  c.port = (c.server.address() as AddressInfo).port;
  return c;
}

function invalidUrlCount(metrics: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith('abuse_signal_total{') && l.includes('outcome="invalid_webhook_url"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('webhook SSRF guard with WEBHOOK_ALLOW_PRIVATE off', () => {
  const targets = (port: number) => [
    `https://127.0.0.1:${port}/hook`,
    'https://169.254.169.254/latest/meta-data/',
    `https://[::ffff:127.0.0.1]:${port}/hook`,
    `https://localhost:${port}/hook`,
  ];

  it('refuses private targets at registration: 400, outcome invalid_webhook_url in /metrics', async () => {
    const t = await startTestNode({ WEBHOOK_ALLOW_PRIVATE: 'false' });
    try {
      const urls = [...targets(8443), 'http://example.com/hook'];
      for (const url of urls) {
        const res = await tryRegister(t, url);
        expect([url, res.status]).toEqual([url, 400]);
        expect(res.body.code).toBe(3);
        expect(res.body.message).toMatch(url.startsWith('http:') ? /https/ : /public address/);
      }
      const metrics = await t.request('GET', '/metrics');
      expect(invalidUrlCount(metrics.text)).toBe(urls.length);
      // the URL never becomes a label
      expect(metrics.text).not.toContain('169.254.169.254');
    } finally {
      await t.stop();
    }
  });

  it('never dials a private target stored while private targets were allowed (restart with them disallowed)', async () => {
    const dataDir = tempDir();
    const counter = await tcpCounter();
    const urls = [...targets(counter.port), `http://127.0.0.1:${counter.port}/hook`];
    try {
      // 1. private targets allowed: the URLs are accepted and stored
      const before = await startTestNode({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true' });
      const merchants = [];
      for (const url of urls) merchants.push(await registerMerchant(before, { webhook_url: url }));
      await before.stop();

      // 2. the same store, private targets disallowed: each delivery is refused before any connection
      const t = await startTestNode({
        DATA_DIR: dataDir,
        WEBHOOK_ALLOW_PRIVATE: 'false',
        WEBHOOK_SCAN_INTERVAL_MS: '50',
        WEBHOOK_RETRY_BASE_MS: '100',
      });
      try {
        const events = [];
        for (const m of merchants) events.push(await commitEvent(t.node.rt.store, m.id));
        for (const [i, ev] of events.entries()) {
          const row = await waitForEvent(t.node.rt.store, ev.id, (d) => d.attempts.length >= 2, `two refused attempts for ${urls[i]}`);
          expect(row.status).toBe('pending');
          const expected = urls[i].startsWith('http:') ? 'blocked_url' : 'blocked_address';
          for (const a of row.attempts) expect([urls[i], a.status, a.error]).toEqual([urls[i], null, expected]);
        }
        expect(counter.connections).toBe(0);
      } finally {
        await t.stop();
      }
    } finally {
      counter.server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
