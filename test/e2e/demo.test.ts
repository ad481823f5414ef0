/**
 * `npm run demo` end to end: it starts its own chain, service and receiver, and must print a verified
 * payment_session.completed webhook for the session it paid, then exit 0 with nothing left running.
 */
import { spawn } from 'node:child_process';

jest.setTimeout(240_000);

function runDemo(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'demo'], {
      cwd: process.cwd(),
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('npm run demo', () => {
  it('registers a merchant, pays a session on a local chain and prints the verified completed webhook', async () => {
    const { code, out } = await runDemo();
    expect({ code, tail: out.slice(-3000) }).toEqual({ code: 0, tail: expect.stringContaining('demo: OK') });
    const session = /session {4}(ps_\w+): 25 USDC to (0x[0-9a-fA-F]{40}), pending/.exec(out);
    expect(session).not.toBeNull();
    const tx = /paid {7}tx (0x[0-9a-f]{64}) in block \d+/.exec(out);
    expect(tx).not.toBeNull();
    expect(out).toMatch(
      /received {3}payment_session\.completed \d+ ms after the block \(X-Service-Signature t=\d+,v1=[0-9a-f]+…\): signature verified/,
    );
    // the printed body is the webhook event of that session
    const body = JSON.parse(/body {7}(\{[\s\S]*?\n {2}\})/.exec(out)![1]!);
    expect(body).toEqual({
      event_type: 'payment_session.completed',
      session_id: session![1],
      status: 'completed',
      amount: 25,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      timestamp: expect.stringMatching(/^\d+$/),
    });
    expect(out).toContain('completed, received 25 USDC, 1 deposit(s)');
    // a local chain: the checkout page, not a public explorer that does not know it
    expect(out).toMatch(/checkout {3}http:\/\/127\.0\.0\.1:\d+\/checkout\/ps_/);
    expect(out).not.toContain('etherscan');
    expect(out).toContain(tx![1]);
    // the merchant's API key is never printed in full
    expect(out).not.toMatch(/service_sk_test_[A-Za-z0-9]{20,}/);
  });
});
