/** The hosted checkout page behind payment_url, in a real browser (Chromium from npm via playwright-core: test/helpers/chromium.ts). */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { chromium, type Browser } from 'playwright-core';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { CHROMIUM_ARGS, chromiumPath } from '../helpers/chromium.ts';

describe('hosted checkout page', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = await chromiumPath();
    t = await startTestNode();
    m = await registerMerchant(t, { name: 'Corner Café' });
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  async function createSession(amount = 12.5) {
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: {
        amount,
        expires_in: '15m',
        paymentMethod: { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' },
        metadata: { order: 'A-1' },
      },
    });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('serves a buyer-safe status and a page with a strict content security policy', async () => {
    const s = await createSession();
    expect(new URL(s.payment_url).pathname).toBe(`/checkout/${s.session_id}`);
    const page = await t.request('GET', `/checkout/${s.session_id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const status = await t.request('GET', `/checkout/${s.session_id}/status`);
    expect(status.body).toMatchObject({
      session_id: s.session_id,
      status: 'pending',
      expected_amount: 12.5,
      received_amount: 0,
      currency: 'USDC',
      address: s.address,
      qr_data: s.qr_data,
    });
    expect(status.body.merchant_id).toBeUndefined();
    expect(status.body.metadata).toBeUndefined();
    expect((await t.request('GET', '/checkout/ps_doesnotexist')).status).toBe(404);
  });

  it('shows amount, address and QR code, and turns to paid live when the session completes', async () => {
    const s = await createSession(7.25);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${t.url}/checkout/${s.session_id}`);
    expect(await page.locator('h1').textContent()).toBe('Pay Corner Café');
    expect(await page.locator('.amount').textContent()).toBe('7.25 USDC');
    expect(await page.locator('#address').textContent()).toBe(s.address);
    expect(await page.locator('.qr svg').count()).toBe(1);
    expect(await page.locator('#wallet').getAttribute('href')).toBe(s.qr_data);
    expect(await page.locator('#status').textContent()).toBe('Waiting for payment');
    expect(await page.locator('#receipt').isVisible()).toBe(false);
    await page.waitForFunction(() => /left$/.test(document.getElementById('countdown')?.textContent ?? ''));

    const sim = await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey });
    expect(sim.status).toBe(200);
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'Paid. Thank you!', null, { timeout: 15_000 });
    expect(await page.locator('#received').textContent()).toBe('7.25 USDC');
    // once paid the buyer's receipt is offered (the PDF behind it is checked in test/integration/receipts.test.ts)
    expect(await page.locator('#receipt').isVisible()).toBe(true);
    const pdf = await page.request.get(new URL((await page.locator('#receipt').getAttribute('href')) ?? '', page.url()).href);
    expect(pdf.status()).toBe(200);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    await page.screenshot({ path: join(tmpdir(), 'checkout-paid.png') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('labels demo sessions', async () => {
    const demo = await t.request('POST', '/v1/payment_sessions/demo', { body: {} });
    expect(demo.status).toBe(201);
    const page = await browser.newPage();
    await page.goto(`${t.url}/checkout/${demo.body.session_id}`);
    expect(await page.locator('h1').textContent()).toBe('Demo checkout');
    expect(await page.locator('.demo').count()).toBe(1);
    await page.close();
  });
});
