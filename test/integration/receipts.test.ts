/**
 * PDF receipts through HTTP: the merchant's and the buyer's, every field read back from the PDF, byte-identical
 * re-renders, ETag and If-None-Match, 409 before any money, and who may read which.
 */
import { creditViaInbox, type PlantedDeposit } from '../helpers/deposits.ts';
import { createHash } from 'node:crypto';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { fetchBytes, pdfText } from '../helpers/pdf.ts';
import { ETH_USDC, SOL_USDC, merchant } from './sessions-helpers.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';

describe('receipts', () => {
  let t: TestNode;
  let shop: RegisteredMerchant;
  let other: RegisteredMerchant;
  let clock = Date.now();

  beforeAll(async () => {
    t = await startTestNode({}, { now: () => new Date(clock) });
    shop = await registerMerchant(t, { name: 'Receipt Shop' });
    await t.call('operators.setRateLimit', { merchant_id: shop.id, rate_limit_per_minute: 100_000 });
    other = await merchant(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const create = async (key: string, body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/payment_sessions', { key, body });
    expect(res.status).toBe(201);
    return res.body;
  };
  const credit = (id: string, deposit: PlantedDeposit) => creditViaInbox(t, id, deposit);
  const receipt = (id: string, key?: string, headers: Record<string, string> = {}) =>
    fetchBytes(`${t.url}/v1/payment_sessions/${id}/receipt`, { ...headers, ...(key ? { 'X-API-Key': key } : {}) });

  it('renders every field of a completed, overpaid session with two deposits, reproducibly', async () => {
    const s = await create(shop.apiKey, { amount: 10.5, expires_in: '1h', paymentMethod: ETH_USDC });
    const tx1 = `0x${'a1'.repeat(32)}`;
    const tx2 = `0x${'b2'.repeat(32)}`;
    await credit(s.session_id, {
      key: `ethereum:testnet:${tx1}:0`,
      tx_hash: tx1,
      index: 0,
      amount_subunits: '4000000',
      token: 'USDC',
      confirmations: 2,
      block_number: 5,
      detected_at: new Date(clock).toISOString(),
    });
    clock += 60_000;
    await credit(s.session_id, {
      key: `ethereum:testnet:${tx2}:3`,
      tx_hash: tx2,
      index: 3,
      amount_subunits: '7000001',
      token: 'USDC',
      confirmations: 2,
      block_number: 6,
      detected_at: new Date(clock).toISOString(),
    });
    const session = (await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: shop.apiKey })).body;
    expect(session.status).toBe('completed');

    const res = await receipt(s.session_id, shop.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(res.headers.get('etag')).toBe(`"${createHash('sha256').update(res.bytes).digest('hex')}"`);

    const { text, info, qr } = await pdfText(res.bytes);
    // the QR code on the page decodes to the explorer link of the paying transaction
    expect(qr).toBe(`https://sepolia.etherscan.io/tx/${tx2}`);
    const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;
    for (const expected of [
      'Receipt Shop',
      `Session: ${s.session_id}`,
      'Status: completed',
      'Token: USDC',
      'Chain: Ethereum',
      'Network: testnet',
      'Expected amount: 10.5 USDC',
      'Received amount: 11.000001 USDC',
      'OVERPAID by 0.500001 USDC',
      `Created: ${utc(session.created_at)}`,
      `Completed: ${utc(session.completed_at)}`,
      'Deposits (2)',
      '1. 4 USDC',
      '2. 7.000001 USDC',
      `Tx ${tx1}`,
      `Tx ${tx2}`,
      `https://sepolia.etherscan.io/tx/${tx1}`,
      `https://sepolia.etherscan.io/tx/${tx2}`,
      `The QR code links to https://sepolia.etherscan.io/tx/${tx2}`,
    ])
      expect(text).toContain(expected);
    expect(text).toContain(`Issued: ${utc(session.completed_at)}`);
    // each deposit's detection and credit time, in UTC
    const detected = [...text.matchAll(/Detected (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC, credited (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC/g)];
    expect(detected).toHaveLength(2);
    expect(detected[1][2] > detected[0][2]).toBe(true);
    expect(text).not.toMatch(/PARTIAL|LATE/);
    // USDC is valued by its peg in the default setup: the value at completion is a fact, not a guess
    expect(text).toContain('Value at completion (USD): 11.00 USD');
    expect(text).toMatch(/1 USDC = 1 USD \(source peg/);
    // the fixed creation date is the completion time
    const completed = new Date(session.completed_at);
    const pdfDate = `D:${completed.toISOString().slice(0, 19).replace(/[-:T]/g, '')}Z`;
    expect(info.CreationDate).toBe(pdfDate);

    // byte-identical later, for the merchant and for the buyer behind the checkout link
    clock += 3_600_000;
    const again = await receipt(s.session_id, shop.apiKey);
    expect(again.bytes.equals(res.bytes)).toBe(true);
    const buyer = await fetchBytes(`${t.url}/checkout/${s.session_id}/receipt`);
    expect(buyer.status).toBe(200);
    expect(buyer.bytes.equals(res.bytes)).toBe(true);
    expect(buyer.headers.get('etag')).toBe(res.headers.get('etag'));

    // If-None-Match: 304 without a body; another tag renders again
    const cached = await receipt(s.session_id, shop.apiKey, { 'If-None-Match': res.headers.get('etag')! });
    expect(cached.status).toBe(304);
    expect(cached.bytes.length).toBe(0);
    expect(
      (await fetchBytes(`${t.url}/checkout/${s.session_id}/receipt`, { 'If-None-Match': `W/${res.headers.get('etag')}` })).status,
    ).toBe(304);
    expect((await receipt(s.session_id, shop.apiKey, { 'If-None-Match': '"other"' })).status).toBe(200);

    // the checkout page links the receipt once paid
    const page = await t.request('GET', `/checkout/${s.session_id}`);
    expect(page.text).toContain(`<a id="receipt" href="/checkout/${s.session_id}/receipt"`);
  });

  it('marks partial and late payments, and changes the ETag when a deposit arrives', async () => {
    const s = await create(shop.apiKey, { amount: 5, expires_in: '10m', paymentMethod: SOL_USDC });
    const sig1 = '3'.repeat(87);
    await credit(s.session_id, {
      key: `solana:testnet:${sig1}:0`,
      tx_hash: sig1,
      index: 0,
      amount_subunits: '1250000',
      token: 'USDC',
      confirmations: 0,
      detected_at: new Date(clock).toISOString(),
    });
    const partial = await receipt(s.session_id, shop.apiKey);
    expect(partial.status).toBe(200);
    const p = await pdfText(partial.bytes);
    expect(p.qr).toBe(`https://explorer.solana.com/tx/${sig1}?cluster=devnet`);
    expect(p.text).toContain('Status: partial_paid');
    expect(p.text).toContain('PARTIAL: 3.75 USDC short');
    expect(p.text).toContain('Chain: Solana');
    expect(p.text).toContain(`https://explorer.solana.com/tx/${sig1}?cluster=devnet`);
    expect(p.text).not.toContain('Completed:');

    clock += 11 * 60_000; // past expires_at: the next deposit is late
    const sig2 = '4'.repeat(88);
    await credit(s.session_id, {
      key: `solana:testnet:${sig2}:1`,
      tx_hash: sig2,
      index: 1,
      amount_subunits: '3750000',
      token: 'USDC',
      confirmations: 0,
      detected_at: new Date(clock).toISOString(),
    });
    const late = await receipt(s.session_id, shop.apiKey, { 'If-None-Match': partial.headers.get('etag')! });
    expect(late.status).toBe(200);
    expect(late.headers.get('etag')).not.toBe(partial.headers.get('etag'));
    const l = await pdfText(late.bytes);
    expect(l.text).toContain('Status: expired');
    expect(l.text).toContain('LATE: money arrived after the session expired');
    expect(l.text).toContain('2. 3.75 USDC [LATE]');
    expect(l.text).toContain('Received amount: 5 USDC');
    expect(l.text).not.toContain('PARTIAL');
  });

  it('answers 409 for a session that received nothing, and shows no link on its page', async () => {
    const s = await create(shop.apiKey, { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC });
    const res = await t.request('GET', `/v1/payment_sessions/${s.session_id}/receipt`, { key: shop.apiKey });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 5, message: expect.stringMatching(/has received no payment yet/) });
    expect((await t.request('GET', `/checkout/${s.session_id}/receipt`)).status).toBe(409);
    expect((await t.request('GET', `/checkout/${s.session_id}`)).text).not.toContain('id="receipt"');
  });

  it('keeps receipts to their merchant; demo receipts are public; simulated payments are marked', async () => {
    const s = await create(shop.apiKey, { amount: 2, expires_in: '1h', paymentMethod: ETH_USDC });
    await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: shop.apiKey });
    expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}/receipt`, { key: other.apiKey })).status).toBe(404);
    const anon = await t.request('GET', `/v1/payment_sessions/${s.session_id}/receipt`);
    expect(anon.status).toBe(401);
    expect(anon.body.code).toBe(7);
    expect((await t.request('GET', '/v1/payment_sessions/ps_nope/receipt', { key: shop.apiKey })).status).toBe(404);
    expect((await t.request('GET', '/checkout/ps_nope/receipt')).status).toBe(404);
    const mine = await receipt(s.session_id, shop.apiKey);
    const { text } = await pdfText(mine.bytes);
    expect(text).toContain('1. 2 USDC [SIMULATED]');
    expect(text).toContain('Sandbox simulation: no chain transaction');

    const demo = (await t.request('POST', '/v1/payment_sessions/demo')).body;
    await t.request('POST', `/v1/payment_sessions/${demo.session_id}/simulate`);
    const d = await receipt(demo.session_id);
    expect(d.status).toBe(200);
    expect((await pdfText(d.bytes)).text).toContain('Demo checkout');
  });

  it('limits receipt requests without a key per client', async () => {
    const limited = await startTestNode({ PUBLIC_RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const demo = (await limited.request('POST', '/v1/payment_sessions/demo')).body;
      await limited.request('POST', `/v1/payment_sessions/${demo.session_id}/simulate`);
      expect((await limited.request('GET', `/checkout/${demo.session_id}/receipt`)).status).toBe(200);
      expect((await limited.request('GET', `/v1/payment_sessions/${demo.session_id}/receipt`)).status).toBe(200);
      const third = await limited.request('GET', `/checkout/${demo.session_id}/receipt`);
      expect(third.status).toBe(429);
      expect(third.body.code).toBe(4);
    } finally {
      await limited.stop();
    }
  });
});
