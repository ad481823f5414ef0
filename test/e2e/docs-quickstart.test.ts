/**
 * The quick starts of the README and docs/ run as written (test/helpers/doctest.ts): each document's
 * blocks in order, in a network namespace of their own, against `npm start` on a fresh data dir, with the
 * email code read from the service's log as a reader would. A quick start that stops working fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { quickStartBlocks, runDoctest } from '../helpers/doctest.ts';

const documents = ['README.md', ...readdirSync('docs').map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md')).sort();
const withQuickStarts = documents
  .map((file) => ({ file, blocks: quickStartBlocks(readFileSync(file, 'utf8'), file) }))
  .filter((d) => d.blocks.length > 0);

describe('quick starts run as written', () => {
  it('finds the quick starts: the README, the CLI and SDK, and the x402 example', () => {
    expect(withQuickStarts.map((d) => d.file)).toEqual(['README.md', 'docs/agents-and-x402.md', 'docs/sdk-and-cli.md']);
  });

  it.each(withQuickStarts.map((d) => [d.file, d.blocks] as const))(
    '%s',
    async (_file, blocks) => {
      const result = await runDoctest([...blocks]);
      if (!result.ok) throw new Error(`quick start failed:\n${result.output.slice(-12_000)}`);
      expect(result.output).toMatch(/::doctest ok/);
    },
    300_000,
  );
});
