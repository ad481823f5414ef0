/**
 * Refunds through HTTP on a started node, with sandbox money (no chain): a session paid by simulation
 * refunds as simulated (completed at once, nothing broadcast, a signed refund.completed webhook), the
 * session shows refunded_amount_subunits and lists its refunds, ten concurrent requests with one
 * Idempotency-Key make one refund, a refund above the rest is a 409 code 5, and every refusal changes
 * nothing. The on-chain refunds are in test/e2e/refunds-chain.test.ts.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, liveMerchant, abuseCount, ETH_USDC } from './sessions-helpers.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import { until } from './chain-listener-helpers.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { fetchBytes, pdfText } from '../helpers/pdf.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createPaymentsClient } from '../../sdk/src/index.ts';

const run = promisify(execFile);

jest.setTimeout(120_000);

describe('refunds of sandbox sessions over HTTP', () => {
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let other: RegisteredMerchant;

  beforeAll(async () => {
    rx = await startReceiver();
    // a mainnet rail (its RPC is never dialled here) for the KYC gate
    t = await startTestNode({ WEBHOOK_SCAN_INTERVAL_MS: '100', ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9' });
    m = await merchant(t, { webhook_url: rx.url });
    other = await merchant(t);
  });
  afterAll(async () => {
    await t?.stop();
    await rx?.close();
  });

  const paidSession = async (amount: number) => {
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount, expires_in: '1h', paymentMethod: ETH_USDC },
    });
    expect(s.status).toBe(201);
    const paid = await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey });
    expect(paid.body.status).toBe('completed');
    return s.body.session_id as string;
  };
  const refund = (sessionId: string, body: object, headers: Record<string, string> = {}, key = m.apiKey) =>
    t.request('POST', `/v1/payment_sessions/${sessionId}/refunds`, { key, body, headers });

  it('ten concurrent requests with one Idempotency-Key make one simulated refund; the rest is refundable, no more', async () => {
    const id = await paidSession(10);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        refund(id, { amount_subunits: '4000000', reason: 'requested_by_customer' }, { 'Idempotency-Key': 'k1' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    const r = answers[0]!.body;
    expect(r).toMatchObject({
      session_id: id,
      merchant_id: m.id,
      chain: 'ethereum',
      network: 'testnet',
      token: 'USDC',
      amount: 4,
      amount_subunits: '4000000',
      destination: null,
      reason: 'requested_by_customer',
      status: 'completed',
      execution: 'simulated',
      simulated: true,
      tx_hash: null,
      fee_subunits: '0',
      failure_reason: null,
    });
    expect(r.id).toMatch(/^re_/);
    expect(answers[0]!.headers.get('location')).toBe(`/v1/payment_sessions/${id}/refunds/${r.id}`);

    // the same key with another body is a conflict, and changes nothing
    const mismatch = await refund(id, { amount_subunits: '1' }, { 'Idempotency-Key': 'k1' });
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.code).toBe(5);

    // above the rest: 409 code 5 naming what is left
    const over = await refund(id, { amount_subunits: '6000001' });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ code: 5, field: 'amount_subunits' });
    expect(over.body.message).toContain('6 USDC (6000000 subunits)');

    // without an amount: everything left
    const rest = await refund(id, {});
    expect(rest.status).toBe(201);
    expect(rest.body.amount_subunits).toBe('6000000');
    const none = await refund(id, {});
    expect(none.status).toBe(409);
    expect(none.body.code).toBe(5);

    const s = (await t.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey })).body;
    expect(s).toMatchObject({ received_amount_subunits: '10000000', refunded_amount_subunits: '10000000', refunded_amount: 10 });
    const list = (await t.request('GET', `/v1/payment_sessions?limit=5`, { key: m.apiKey })).body.data.find(
      (x: any) => x.session_id === id,
    );
    expect(list.refunded_amount_subunits).toBe('10000000');

    const page1 = await t.request('GET', `/v1/payment_sessions/${id}/refunds?limit=1`, { key: m.apiKey });
    expect(page1.body).toMatchObject({ has_more: true });
    expect(page1.body.data[0].id).toBe(rest.body.id); // newest first
    const page2 = await t.request('GET', `/v1/payment_sessions/${id}/refunds?limit=1&cursor=${page1.body.next_cursor}`, { key: m.apiKey });
    expect(page2.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(page2.body.data.map((x: any) => x.id)).toEqual([r.id]);
    expect((await t.request('GET', `/v1/payment_sessions/${id}/refunds/${r.id}`, { key: m.apiKey })).body).toEqual(r);

    // the merchant's wallet: the simulated money left as two refunds
    const wallets = (await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data;
    const w = wallets.find((x: any) => x.chain === 'ethereum' && x.is_default);
    const txs = (await t.request('GET', `/v1/wallets/${w.id}/transactions`, { key: m.apiKey })).body.data.filter(
      (x: any) => x.session_id === id,
    );
    expect(
      txs
        .filter((x: any) => x.type === 'refund')
        .map((x: any) => [x.amount_subunits, x.status, x.refund_id, x.simulated])
        .sort(),
    ).toEqual(
      [
        ['4000000', 'posted', r.id, true],
        ['6000000', 'posted', rest.body.id, true],
      ].sort(),
    );
    expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });

    // refund.completed, signed like every event, and in the events API
    const hook = await until('the refund.completed webhook', () => rx.received.find((x) => x.raw.includes(r.id)));
    expect(hook.headers['x-service-event']).toBe('refund.completed');
    expect(verifyWebhook(hook.raw, String(hook.headers['x-service-signature']), m.webhookSecret)).toBeTruthy();
    expect(JSON.parse(hook.raw)).toMatchObject({
      event_type: 'refund.completed',
      refund_id: r.id,
      session_id: id,
      status: 'completed',
      amount: 4,
      amount_subunits: '4000000',
      currency: 'USDC',
      simulated: true,
    });
    const events = (await t.request('GET', '/v1/events?type=refund.completed', { key: m.apiKey })).body.data;
    expect(events.map((e: any) => e.refund_id).sort()).toEqual([r.id, rest.body.id].sort());
    // the receipt shows the refunds
    const pdf = await fetchBytes(`${t.url}/v1/payment_sessions/${id}/receipt`, { 'X-API-Key': m.apiKey });
    expect(pdf.status).toBe(200);
    const { text } = await pdfText(pdf.bytes);
    for (const line of [
      'Refunded amount: 10 USDC',
      'REFUNDED: 10 USDC',
      'Refunds (2)',
      '1. 4 USDC completed [SIMULATED]',
      `Refund ${r.id}`,
      '2. 6 USDC completed',
    ])
      expect(text).toContain(line);
    // counted like payouts: a gauge by status
    expect(await (await fetch(`${t.url}/metrics`)).text()).toMatch(/^refunds\{status="completed"\} 2$/m);
  });

  it('the SDK and the CLI refund, get and list', async () => {
    const id = await paidSession(3);
    const client = createPaymentsClient({ baseUrl: t.url, apiKey: m.apiKey });
    const r = await client.refunds.create(id, { amount_subunits: '1000000', reason: 'duplicate' });
    expect(r).toMatchObject({ status: 'completed', amount_subunits: '1000000', reason: 'duplicate' });
    expect(await client.refunds.get(id, r.id)).toEqual(r);
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PAYMENTS_BASE_URL: t.url, PAYMENTS_API_KEY: m.apiKey };
    const cli = (args: string[]) => run(process.execPath, ['sdk/bin/payments.ts', ...args], { env });
    const made = JSON.parse((await cli(['--json', 'refunds', 'create', id, '--reason', 'requested_by_customer'])).stdout);
    expect(made).toMatchObject({ status: 'completed', amount_subunits: '2000000', simulated: true }); // everything left
    const list = await cli(['refunds', 'list', id]);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+SIMULATED\s+AMOUNT/);
    expect(list.stdout).toMatch(new RegExp(`${made.id}\\s+completed\\s+yes\\s+2`));
    expect((await client.refunds.list(id)).data.map((x) => x.id)).toEqual([made.id, r.id]);
  });

  it('a mainnet refund needs verified KYC, through the environment gate (403, mainnet_kyc_required)', async () => {
    const live = await liveMerchant(t, 'verified');
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: live.apiKey,
      body: { amount: 1, expires_in: '1h', paymentMethod: { ...ETH_USDC, network: 'mainnet' } },
    });
    expect(s.status).toBe(201);
    // verified: the gate passes, and a session that received nothing has nothing to refund
    expect((await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/refunds`, { key: live.apiKey, body: {} })).status).toBe(409);
    await t.call('operators.setKyc', { merchant_id: live.id, status: 'none' });
    const before = await abuseCount(t, { outcome: 'mainnet_kyc_required' });
    const gated = await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/refunds`, { key: live.apiKey, body: {} });
    expect(gated.status).toBe(403);
    expect(gated.body).toMatchObject({ field: 'session_id' });
    expect(gated.body.message).toContain('mainnet refunds require KYC verification');
    expect(await abuseCount(t, { outcome: 'mainnet_kyc_required' })).toBe(before + 1);
  });

  it('refuses bad input, other merchants and unpaid sessions, changing nothing', async () => {
    const id = await paidSession(1);
    const unknown = await refund(id, { amount_subunits: '1', tip: 1 });
    expect(unknown.status).toBe(400);
    const zero = await refund(id, { amount_subunits: '0' });
    expect(zero).toMatchObject({ status: 400, body: { field: 'amount_subunits' } });
    const badDest = await refund(id, { destination: '0x1234' });
    expect(badDest).toMatchObject({ status: 400, body: { field: 'destination' } });
    expect((await refund(id, {}, {}, other.apiKey)).status).toBe(404);
    expect((await t.request('GET', `/v1/payment_sessions/${id}/refunds`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('POST', `/v1/payment_sessions/${id}/refunds`, { body: {} })).status).toBe(401);
    const unpaid = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC },
    });
    const nothing = await refund(unpaid.body.session_id, {});
    expect(nothing.status).toBe(409);
    expect(nothing.body.message).toContain('received nothing');
    expect((await t.request('GET', `/v1/payment_sessions/${id}/refunds`, { key: m.apiKey })).body.data).toEqual([]);
    expect((await t.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey })).body.refunded_amount_subunits).toBe('0');
  });
});
