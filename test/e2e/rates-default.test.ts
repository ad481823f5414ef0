/**
 * Rates in the default setup (`node index.ts` with nothing configured), as an operator and a client see
 * them: USDC is priced by its peg (1 USD, `source: "peg"`), a pair without any source is a 503 that names
 * the settings and says a retry will not help, and the node says so once, as a warning, never a stack per
 * request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';

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
});
