/**
 * `payments trigger <event_type>`: makes a sandbox session (or payout) reach an event, then waits for
 * the event to be in GET /v1/events and returns it. What sandbox can do without a chain:
 * - payment_session.completed: create a session and simulate it;
 * - payment_session.expired: create a session of 10 s and let it expire;
 * - payout.completed: fund the default wallet with a simulated session, then pay out from it (a
 *   simulated payout completes at once).
 * partial_paid and payout.failed need a real chain and are refused with exit code 2.
 */
import type { PaymentsClient, Event } from '../client.ts';
import { CliError, EXIT } from './output.ts';

export const TRIGGERABLE = ['payment_session.completed', 'payment_session.expired', 'payout.completed'] as const;

/** a checksummed address nobody holds the key of; simulated payouts send nothing anyway */
const ETHEREUM_SINK = '0x000000000000000000000000000000000000dEaD';

async function waitForEvent(
  client: PaymentsClient,
  type: string,
  since: string,
  match: (e: Event) => boolean,
  timeoutMs: number,
): Promise<Event> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await client.events.list({ type, created_after: since, limit: 100 });
    const found = page.data.find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new CliError(`no ${type} event within ${Math.round(timeoutMs / 1000)} s`, EXIT.UNAVAILABLE);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function trigger(
  client: PaymentsClient,
  type: string,
  o: { amount: number; chain: string; token: string; destination?: string; info: (t: string) => void },
): Promise<Event> {
  if (!(TRIGGERABLE as readonly string[]).includes(type)) {
    throw new CliError(`${type} cannot be triggered in sandbox (it needs a real chain); triggerable: ${TRIGGERABLE.join(', ')}`);
  }
  // a second of slack for a clock that differs from the service's
  const since = new Date(Date.now() - 1000).toISOString();
  const paymentMethod = { methodID: 0 as const, chain: o.chain, token: o.token, network: 'testnet' as const };
  if (type === 'payment_session.expired') {
    const s = await client.sessions.create({ amount: o.amount, expires_in: '10s', paymentMethod, metadata: { trigger: type } });
    o.info(`created ${s.session_id}; waiting for it to expire (10 s)…`);
    return waitForEvent(client, type, since, (e) => e.session_id === s.session_id, 60_000);
  }
  const s = await client.sessions.create({ amount: o.amount, expires_in: '15m', paymentMethod, metadata: { trigger: type } });
  await client.sessions.simulate(s.session_id);
  o.info(`created and simulated ${s.session_id}`);
  if (type === 'payment_session.completed') return waitForEvent(client, type, since, (e) => e.session_id === s.session_id, 30_000);
  const wallets = await client.wallets.list();
  const wallet = wallets.data.find((w) => w.chain === o.chain && w.network === 'testnet' && w.is_default);
  if (!wallet) throw new CliError(`no default ${o.chain} testnet wallet was funded`, EXIT.ERROR);
  const destination = o.destination ?? (o.chain === 'ethereum' ? ETHEREUM_SINK : undefined);
  if (!destination) throw new CliError('--destination is needed for a payout on this chain');
  const payout = await client.payouts.create({
    wallet_id: wallet.id,
    amount: o.amount,
    token: o.token,
    destination,
    metadata: { trigger: type },
  });
  o.info(`payout ${payout.id} from ${wallet.id}: ${payout.status}`);
  return waitForEvent(client, type, since, (e) => (e as Record<string, unknown>).payout_id === payout.id, 30_000);
}
