/**
 * The hosted checkout page behind payment_url, in a real browser (Chromium from npm via playwright-core:
 * test/helpers/chromium.ts), paid on a real local chain (Hardhat with TestUSDC) and priced against a
 * CoinGecko-shaped rate source. Each state is checked as a buyer sees it and photographed into
 * test-output/checkout/ (TEST_OUTPUT_DIR overrides): open, partially paid, paid, expired, a stale rate and
 * an unknown link. The page moves between states live, without a reload, and never shows a QR code or a
 * wallet link once paid or expired.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { CHROMIUM_ARGS, chromiumPath } from '../helpers/chromium.ts';
import { FakeCoinGecko } from '../helpers/fake-coingecko.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { pdfText } from '../helpers/pdf.ts';

jest.setTimeout(240_000);

const OUT = resolve(process.env.TEST_OUTPUT_DIR ?? 'test-output', 'checkout');
const RAIL = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };

describe('hosted checkout page', () => {
  let chain: HardhatNode;
  let usdc: TestUsdc;
  let rates: FakeCoinGecko;
  let t: TestNode;
  let m: RegisteredMerchant;
  let browser: Browser;
  let context: BrowserContext;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const executablePath = await chromiumPath();
    chain = await startHardhatNode();
    usdc = await chain.deployTestUsdc();
    await usdc.mint(chain.accounts[1]!.address, 1_000_000_000n);
    rates = new FakeCoinGecko();
    await rates.start();
    rates.prices['usd-coin'] = { usd: '0.9998', last_updated_at: Math.floor(Date.now() / 1000) };
    t = await startTestNode(
      {
        ETHEREUM_TESTNET_RPC_URL: chain.url,
        ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
        ETHEREUM_TESTNET_CONFIRMATIONS: '1',
        CHAIN_POLL_INTERVAL_MS: '200',
        SESSION_SCAN_INTERVAL_MS: '200',
        RATE_SOURCES: '*=http',
        RATES_HTTP_URL: rates.url,
        RATES_CACHE_TTL: '1',
      },
      { now },
    );
    m = await registerMerchant(t, { name: 'Corner Café' });
    await t.call('operators.setRateLimit', { merchant_id: m.id, rate_limit_per_minute: 100_000 });
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 520, height: 1100 }, permissions: ['clipboard-read', 'clipboard-write'] });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await rates?.stop();
    await chain?.stop();
  });

  async function createSession(body: Record<string, unknown> = {}) {
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 7.25, expires_in: '15m', paymentMethod: RAIL, metadata: { order_id: 'A-1001', note: 'not for the buyer' }, ...body },
    });
    expect(res.status).toBe(201);
    return res.body;
  }

  /** A page that records console errors and failed or external requests. */
  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith(t.url) && !r.url().startsWith('data:')) problems.push(`external request ${r.url()}`);
    });
    await page.goto(url);
    return { page, problems };
  }

  const text = (page: Page, sel: string) => page.locator(sel).textContent();
  const shot = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

  it('open: amount, fiat equivalent, order reference, TEST MODE, QR code, wallet link, copy buttons and a countdown', async () => {
    const s = await createSession({ return_url: 'https://shop.example/orders/A-1001' });
    expect(s.return_url).toBe('https://shop.example/orders/A-1001');
    // a local development chain has no public explorer: no link, rather than a wrong one
    expect(s.explorer_url).toBeUndefined();
    const { page, problems } = await open(s.payment_url.replace(/^https?:\/\/[^/]+/, t.url));
    expect(await text(page, 'h1')).toBe('Pay Corner Café');
    expect(await page.locator('#test-mode').isVisible()).toBe(true);
    expect(await text(page, '#test-mode')).toMatch(/^TEST MODE/);
    expect(await text(page, '#order-ref')).toBe('A-1001');
    expect(await page.content()).not.toContain('not for the buyer');
    expect(await text(page, '.amount')).toBe('7.25 USDC');
    expect(await text(page, '#fiat')).toBe('About: ≈ 7.25 USD'); // 7.25 × 0.9998 = 7.24855, to the cent
    expect(await text(page, '#status')).toBe('Waiting for payment');
    expect(await page.locator('.qr svg').count()).toBe(1);
    expect(await page.locator('.qr').getAttribute('aria-label')).toBe('QR code to pay 7.25 USDC on Ethereum testnet');
    expect(await page.locator('#wallet').getAttribute('href')).toBe(s.qr_data);
    expect(await text(page, '#address')).toBe(s.address);
    expect(await text(page, '#due')).toBe('7.25');
    expect(await page.locator('#explorer').count()).toBe(0);
    expect(await page.locator('#receipt').count()).toBe(0);
    expect(await page.locator('#return').count()).toBe(0); // only once paid or expired
    await page.waitForFunction(() => /^1[45]:\d\d left to pay$/.test(document.getElementById('countdown')?.textContent ?? ''));
    // the copy buttons put the exact text on the clipboard and say so to screen readers
    await page.click('button[data-copy="address"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(s.address);
    expect(await text(page, '#copied')).toBe('Address copied');
    await page.click('button[data-copy="due"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('7.25');
    // every control has an accessible name; the status is a live region
    const buttons = await page.getByRole('button').all();
    expect(buttons.length).toBe(2);
    expect(await page.getByRole('button', { name: 'Copy address' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Copy amount' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Open in wallet' }).count()).toBe(1);
    expect(await page.getByRole('status').first().textContent()).toBe('Waiting for payment');
    expect(await page.getByRole('img', { name: /QR code to pay/ }).count()).toBe(1);
    await page.waitForTimeout(2100); // "Copied" returns to "Copy" before the picture
    await shot(page, 'checkout-open');

    // partially paid, live: what is left, and the QR code and wallet link ask for exactly that
    await usdc.transfer(1, s.address, 2_000_000n);
    await page.waitForFunction(() => document.getElementById('checkout')?.dataset.state === 'partially_paid', null, { timeout: 30_000 });
    expect(await text(page, '#status')).toBe('Partly paid: send the rest');
    expect(await text(page, '#left')).toBe('Received 2 USDC. 5.25 USDC left to pay.');
    expect(await text(page, '#due')).toBe('5.25');
    expect(await page.locator('#wallet').getAttribute('href')).toBe(s.qr_data.replace('uint256=7250000', 'uint256=5250000'));
    expect(await page.locator('.qr svg').count()).toBe(1);
    expect(await page.locator('#receipt').isVisible()).toBe(true);
    await shot(page, 'checkout-partially-paid');

    // paid, live: a clear message, the receipt and the way back; no QR code, no wallet link
    await usdc.transfer(1, s.address, 5_250_000n);
    await page.waitForFunction(() => document.getElementById('checkout')?.dataset.state === 'paid', null, { timeout: 30_000 });
    expect(await text(page, '#status')).toBe('Paid. Thank you!');
    expect(await text(page, '#paid')).toBe('Paid in full: 7.25 USDC received. You can close this page.');
    expect(await page.locator('.qr').count()).toBe(0);
    expect(await page.locator('#wallet').count()).toBe(0);
    expect(await page.locator('#pay').count()).toBe(0);
    expect(await page.locator('#return').getAttribute('href')).toBe('https://shop.example/orders/A-1001');
    expect(await text(page, '#return')).toBe('Back to the shop');
    expect(await page.locator('#explorer').count()).toBe(0);
    const pdf = await page.request.get(new URL((await page.locator('#receipt').getAttribute('href')) ?? '', page.url()).href);
    expect(pdf.status()).toBe(200);
    const receipt = (await pdfText(Buffer.from(await pdf.body()))).text;
    expect(receipt).toContain('Order: A-1001');
    expect(receipt).toMatch(/Value at completion \(USD\): 7\.25 USD/);
    expect(receipt).toContain('A local development chain: no public explorer link.');
    await shot(page, 'checkout-paid');
    // the same page loaded afresh is the paid page too
    await page.reload();
    expect(await page.locator('.qr').count()).toBe(0);
    expect(await page.locator('#wallet').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('expired: says so live, with no QR code and no wallet link, and links back to the shop', async () => {
    const s = await createSession({ return_url: 'https://shop.example/cart' });
    const { page, problems } = await open(`${t.url}/checkout/${s.session_id}`);
    expect(await page.locator('.qr svg').count()).toBe(1);
    // the service's clock passes the deadline: the expiry scanner expires it, the open page follows
    offset += 16 * 60_000;
    await page.waitForFunction(() => document.getElementById('checkout')?.dataset.state === 'expired', null, { timeout: 30_000 });
    await page.waitForFunction(() => !!document.getElementById('return'), null, { timeout: 10_000 });
    expect(await text(page, '#status')).toBe('This checkout has expired');
    expect(await text(page, '#expired')).toBe(
      'No payment can be made here any more. Ask the shop for a new payment link if you still want to pay.',
    );
    expect(await page.locator('.qr').count()).toBe(0);
    expect(await page.locator('#wallet').count()).toBe(0);
    expect(await page.locator('#return').getAttribute('href')).toBe('https://shop.example/cart');
    expect((await t.request('GET', `/v1/payment_sessions/${s.session_id}`, { key: m.apiKey })).body.status).toBe('expired');
    await shot(page, 'checkout-expired');
    expect(problems).toEqual([]);
    await page.close();
  });

  it("the countdown reaching zero ends the payment part on the buyer's screen at once", async () => {
    const s = await createSession({ expires_in: '30s' });
    const page = await context.newPage();
    await page.clock.install({ time: now() }); // the buyer's clock agrees with the service's
    await page.goto(`${t.url}/checkout/${s.session_id}`);
    expect(await page.locator('#wallet').count()).toBe(1);
    expect(await text(page, '#countdown')).toMatch(/^0:(29|30) left to pay$/);
    // both clocks pass the deadline; the page does not wait for its next poll
    offset += 31_000;
    await page.clock.fastForward('00:31');
    // polled from here: the page's own timers (and so waitForFunction's) run on the installed clock
    const state = () => page.evaluate(() => document.getElementById('checkout')?.dataset.state);
    for (let i = 0; i < 100 && (await state()) !== 'expired'; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await state()).toBe('expired');
    expect(await page.locator('.qr').count()).toBe(0);
    expect(await page.locator('#wallet').count()).toBe(0);
    expect(await text(page, '#status')).toBe('This checkout has expired');
    await page.close();
  });

  it('flags a fiat equivalent from a stale rate, and shows none without a rate', async () => {
    rates.prices['usd-coin'] = { usd: '1.0001', last_updated_at: Math.floor(Date.now() / 1000) - 2 * 3600 };
    await new Promise((r) => setTimeout(r, 1100)); // past RATES_CACHE_TTL
    const s = await createSession({ metadata: { reference: 'INV-77' } });
    const { page } = await open(`${t.url}/checkout/${s.session_id}`);
    expect(await text(page, '#order-ref')).toBe('INV-77');
    expect(await text(page, '#fiat')).toMatch(/^About: ≈ 7\.25 USD \(rate from \d{4}-\d\d-\d\d \d\d:\d\d UTC, may be out of date\)$/);
    await shot(page, 'checkout-stale-rate');
    await page.close();
    // ETH has no price at the source: no fiat line, never an invented one
    const bare = await createSession({ amount: 0.5, paymentMethod: { ...RAIL, token: 'ETH' }, metadata: {} });
    const second = await open(`${t.url}/checkout/${bare.session_id}`);
    expect(await text(second.page, '.amount')).toBe('0.5 ETH');
    expect(await second.page.locator('#fiat').count()).toBe(0);
    expect(await second.page.locator('#order-ref').count()).toBe(0);
    await second.page.close();
  });

  it('labels demo sessions TEST MODE', async () => {
    const demo = await t.request('POST', '/v1/payment_sessions/demo', { body: {} });
    expect(demo.status).toBe(201);
    const { page } = await open(`${t.url}/checkout/${demo.body.session_id}`);
    expect(await text(page, 'h1')).toBe('Demo checkout');
    expect(await text(page, '#test-mode')).toMatch(/^TEST MODE · demo/);
    await page.close();
  });

  it('answers an unknown checkout with an HTML page to a browser and the error envelope to an API client', async () => {
    const { page, problems } = await open(`${t.url}/checkout/ps_doesnotexist`);
    expect(await text(page, 'h1')).toBe('Checkout not found');
    // the browser reports the 404 of the document itself; nothing else may fail
    problems.splice(0, problems.length, ...problems.filter((p) => !/status of 404/.test(p)));
    const requestId = await text(page, '#request-id');
    expect(requestId).toMatch(/^req_/);
    await shot(page, 'checkout-not-found');
    expect(problems).toEqual([]);
    await page.close();
    const html = await t.request('GET', '/checkout/ps_doesnotexist', { headers: { Accept: 'text/html,application/xhtml+xml' } });
    expect(html.status).toBe(404);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(html.text).toContain(html.headers.get('x-request-id'));
    for (const accept of [undefined, 'application/json', '*/*']) {
      const api = await t.request('GET', '/checkout/ps_doesnotexist', accept ? { headers: { Accept: accept } } : {});
      expect(api.status).toBe(404);
      expect(api.body).toMatchObject({ code: 2, message: 'checkout not found', request_id: api.headers.get('x-request-id') });
    }
  });

  it('serves a buyer-safe status and a page with a strict content security policy', async () => {
    const s = await createSession();
    const page = await t.request('GET', `/checkout/${s.session_id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    // nothing external: no URL in src or href other than the wallet URI, the page's own links and the shop
    expect(page.text).not.toMatch(/\b(src|href)="https?:\/\/(?!shop\.example)/);
    const status = await t.request('GET', `/checkout/${s.session_id}/status`);
    expect(status.body).toMatchObject({
      session_id: s.session_id,
      status: 'pending',
      expected_amount: 7.25,
      received_amount: 0,
      received_amount_subunits: '0',
      currency: 'USDC',
      address: s.address,
      qr_data: s.qr_data,
    });
    expect(status.body.merchant_id).toBeUndefined();
    expect(status.body.metadata).toBeUndefined();
  });
});
