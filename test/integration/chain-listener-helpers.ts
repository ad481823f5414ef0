/** Shared by the chain listener tests: sessions over HTTP, waiting on them, webhooks of a session. */
import type { TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import type { Receiver, Received } from './webhooks-helpers.ts';

export const RAILS = {
  ethUsdc: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
  eth: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'ETH' },
  solUsdc: { methodID: 0, chain: 'solana', network: 'testnet', token: 'USDC' },
  sol: { methodID: 0, chain: 'solana', network: 'testnet', token: 'SOL' },
} as const;

export async function createSession(t: TestNode, m: RegisteredMerchant, rail: object, amount: number, expires_in = '1h'): Promise<any> {
  const res = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount, expires_in, paymentMethod: rail } });
  if (res.status !== 201) throw new Error(`session creation failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function getSession(t: TestNode, m: RegisteredMerchant, id: string): Promise<any> {
  const res = await t.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey });
  if (res.status !== 200) throw new Error(`session read failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Polls until `check` returns a truthy value (generous deadline: a busy 2-core machine). */
export async function until<T>(
  what: string,
  check: () => Promise<T | false | null | undefined> | T | false | null | undefined,
  timeoutMs = 45_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the session satisfies `pred`; returns it. */
export function sessionWhen(
  t: TestNode,
  m: RegisteredMerchant,
  id: string,
  what: string,
  pred: (s: any) => boolean,
  timeoutMs?: number,
): Promise<any> {
  return until(
    what,
    async () => {
      const s = await getSession(t, m, id);
      return pred(s) ? s : null;
    },
    timeoutMs,
  );
}

export const webhooksOf = (rx: Receiver, sessionId: string): Received[] =>
  rx.received.filter((r) => {
    try {
      return JSON.parse(r.raw).session_id === sessionId;
    } catch {
      return false;
    }
  });

/** The stored deposits of a session (operator action). */
export async function depositsOf(t: TestNode, sessionId: string): Promise<any[]> {
  return (await t.call<{ deposits: any[] }>('operators.listDeposits', { session_id: sessionId, limit: 1000 })).deposits;
}

/**
 * The stored deposits of a session once the inbox has recorded the session's acknowledgement of each
 * (`delivered`). The inbox writes it just after the session's own commit, so a session that already
 * shows a deposit (or a revert) may still have it unacknowledged for a moment.
 */
export function acknowledgedDepositsOf(t: TestNode, sessionId: string): Promise<any[]> {
  return until(`the inbox to record the deposits of ${sessionId} as delivered`, async () => {
    const deposits = await depositsOf(t, sessionId);
    return deposits.length > 0 && deposits.every((d) => d.delivered) ? deposits : null;
  });
}

/**
 * Holds back the next session document the node writes (the actor's `create`), as a slow commit or a
 * lagging replica would: `session` resolves with the document (id, created_at, address) while nothing of
 * it is in the store yet; `release()` lets the write through. Other writes are not touched.
 */
export function holdNextSessionCommit(t: TestNode): { session: Promise<any>; release(): void } {
  const store = t.node.rt.store;
  const write = store.write;
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let captured!: (doc: any) => void;
  const session = new Promise<any>((r) => {
    captured = r;
  });
  store.write = async function (this: unknown, ops) {
    const insert = ops.find((o) => o.op === 'insert' && o.coll === 'payment_sessions');
    if (insert && insert.op === 'insert') {
      store.write = write;
      captured(insert.doc);
      await gate;
    }
    return write.call(store, ops);
  };
  return { session, release };
}
