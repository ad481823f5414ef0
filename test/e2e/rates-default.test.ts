/**
 * Rates in the default setup (`node index.ts` with nothing configured), as an operator and a client see
 * them: USDC is priced by its peg (1 USD, `source: "peg"`), a pair without any source is a 503 that names
 * the settings and says a retry will not help, and the node says so once, as a warning, never a stack per
 * request; the `payments` CLI asks once and prints the fix.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';

/** A pass-through to `target` that records each request line: what a client really sent. */
async function recordingProxy(target: string) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    void fetch(`${target}${req.url}`, { method: req.method, headers: { 'X-API-Key': String(req.headers['x-api-key'] ?? '') } }).then(
      async (answer) => {
        const headers: Record<string, string> = {};
        for (const h of ['content-type', 'x-request-id', 'retry-after']) if (answer.headers.has(h)) headers[h] = answer.headers.get(h)!;
        res.writeHead(answer.status, headers);
        res.end(Buffer.from(await answer.arrayBuffer()));
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('rates with nothing configured', () => {
  let node: ChildNode;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rates-default-'));
    node = await spawnNode({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers USDC at its peg, and names the pairs it has no source for', async () => {
    const res = await fetch(`${node.url}/v1/rates`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: unknown[]; unavailable: Array<{ base: string }> };
    expect(body.data).toEqual([{ base: 'USDC', quote: 'USD', rate: '1', source: 'peg', as_of: expect.any(String), stale: false }]);
    expect(body.unavailable.map((u) => u.base).sort()).toEqual(['ETH', 'SOL']);
    const usdc = await fetch(`${node.url}/v1/rates?base=usdc`);
    expect(((await usdc.json()) as { data: Array<{ source: string }> }).data[0].source).toBe('peg');
  });

  it('a pair without a source is a 503 naming the settings, not retryable, and warned about once', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${node.url}/v1/rates?base=ETH`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ code: 1, message: expect.stringMatching(/no rate for ETH\/USD/), retryable: false });
      expect(body.remediation).toMatch(/RATES_STATIC/);
      expect(body.remediation).toMatch(/RATE_SOURCES/);
    }
    const out = node.output();
    expect(out.match(/WARN .*no rate source is configured for ETH\/USD/g)).toHaveLength(1);
    expect(out).not.toMatch(/ServiceError|Request error|at .*rates\.service\.ts/);
  });

  it('the CLI asks once: a 503 that says a retry cannot help is not retried, and its fix is printed', async () => {
    const proxy = await recordingProxy(node.url);
    try {
      const child = spawn(process.execPath, ['sdk/bin/payments.ts', 'rates', '--base', 'ETH'], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dataDir,
          PAYMENTS_CONFIG: join(dataDir, 'cli.json'),
          PAYMENTS_BASE_URL: proxy.url,
          PAYMENTS_API_KEY: 'service_sk_test_rates_are_public',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((r) => child.on('close', r));
      expect(code).toBe(8); // service unavailable
      expect(stderr).toMatch(/^Error: no rate for ETH\/USD.*\n {2}fix: .*RATES_STATIC.*\n {2}request id: req_\w+\n$/);
      expect(proxy.seen).toEqual(['GET /v1/rates?base=ETH']);
    } finally {
      await proxy.close();
    }
  });
});
