/** Shared pieces of the payment-session tests. */
import type { TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';

export const ETH_USDC = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
export const SOL_USDC = { methodID: 0, chain: 'solana', network: 'testnet', token: 'USDC' };

/** A sandbox merchant (or a live one with `bearer`) that the per-minute rate limit does not stop. */
export async function merchant(t: TestNode, opts: { bearer?: string; webhook_url?: string } = {}): Promise<RegisteredMerchant> {
  const m = await registerMerchant(t, opts);
  await t.call('operators.setRateLimit', { merchant_id: m.id, rate_limit_per_minute: 100_000 });
  return m;
}

/** A live merchant registered by an operator-created bearer user; KYC verified when asked. */
export async function liveMerchant(t: TestNode, kyc: 'verified' | 'none' = 'none'): Promise<RegisteredMerchant> {
  const user = await t.call<{ bearer_token: string }>('operators.createUser', {
    email: `owner${Date.now()}${Math.random().toString(36).slice(2, 6)}@trusted.test`,
  });
  const m = await merchant(t, { bearer: user.bearer_token });
  if (kyc === 'verified') await t.call('operators.setKyc', { merchant_id: m.id, status: 'verified' });
  return m;
}

/** The value of abuse_signal_total summed over the series matching `labels`. */
export async function abuseCount(t: TestNode, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^abuse_signal_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const got = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[2]);
  }
  return sum;
}

export { eventually } from '../helpers/wait.ts';

/** POST /v1/payment_sessions with a body sent as given (bytes, malformed JSON, any headers): the body reader's own tests */
export async function postRawSession(
  t: TestNode,
  apiKey: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${t.url}/v1/payment_sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey, ...headers },
    body: body as never,
  });
  return { status: res.status, body: await res.json() };
}
