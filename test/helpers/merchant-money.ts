/**
 * A merchant's money calls over HTTP as the chain tests make them (wallets, payouts, custody moves); each
 * throws on an unexpected status, and the waits poll with a generous deadline.
 */
import type { TestNode } from './node.ts';
import type { RegisteredMerchant } from './merchant.ts';
import { until } from '../integration/chain-listener-helpers.ts';

/** GET with the merchant's key: the body of a 200 */
export async function getOk(t: TestNode, m: RegisteredMerchant, path: string) {
  const r = await t.request('GET', path, { key: m.apiKey });
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
  return r.body;
}

/** POST /v1/payouts: the payout of a 201 */
export async function payoutOk(t: TestNode, m: RegisteredMerchant, body: Record<string, unknown>) {
  const r = await t.request('POST', '/v1/payouts', { key: m.apiKey, body });
  if (r.status !== 201) throw new Error(`payout refused: ${r.status} ${r.text}`);
  return r.body;
}

/** the payout once completed or failed */
export const payoutFinal = (t: TestNode, m: RegisteredMerchant, id: string, timeoutMs = 120_000) =>
  until(
    `payout ${id} final`,
    async () => {
      const p = await getOk(t, m, `/v1/payouts/${id}`);
      return p.status === 'completed' || p.status === 'failed' ? p : null;
    },
    timeoutMs,
  );

/** the node's money-out status once no custody move waits, tops up or moves */
export const custodyIdle = (t: TestNode, what = 'the custody moves to finish') =>
  until(
    what,
    async () => {
      const status = await t.call('money-out.status');
      return status.custody_moves.waiting + status.custody_moves.topup + status.custody_moves.moving === 0 ? status : null;
    },
    120_000,
  );

/** until the session's settlement into the wallet is posted (its deposit swept) */
export const settlementPosted = (t: TestNode, m: RegisteredMerchant, walletId: string, sessionId: string, what: string) =>
  until(
    what,
    async () =>
      (await getOk(t, m, `/v1/wallets/${walletId}/transactions?limit=100`)).data.some(
        (x: any) => x.type === 'settlement' && x.session_id === sessionId && x.status === 'posted',
      ),
    90_000,
  );
