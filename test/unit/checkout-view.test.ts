/** What the hosted checkout shows in each state (pure: lib/checkout/view.ts and page.ts; the browser test drives the live page). */
import { checkoutView, type CheckoutInputs } from '../../lib/checkout/view.ts';
import { renderCheckout, renderNotFound, SCRIPT_HASH } from '../../lib/checkout/page.ts';
import { checkReturnUrl } from '../../lib/checkout/return-url.ts';
import { orderReference } from '../../lib/sessions/presenter.ts';
import { receiptData } from '../../lib/receipts/model.ts';
import { toEnvelope } from '../../lib/http/envelope.ts';
import type { DepositRecord, PaymentSessionState } from '../../lib/sessions/payment-session.ts';

const NOW = new Date('2026-01-01T00:05:00.000Z');
const dep = (over: Partial<DepositRecord>): DepositRecord => ({
  key: 'k',
  tx_hash: '0xaa',
  index: 0,
  amount_subunits: '1',
  token: 'USDC',
  confirmations: 1,
  block_number: 1,
  block_hash: null,
  detected_at: '2026-01-01T00:01:00.000Z',
  credited_at: '2026-01-01T00:01:01.000Z',
  late: false,
  counted: true,
  reverted: false,
  reverted_at: null,
  simulated: false,
  ...over,
});
const session = (over: Partial<PaymentSessionState> = {}): PaymentSessionState => ({
  id: 'ps_x',
  merchant_id: 'mer_x',
  demo: false,
  sandbox: false,
  environment: 'live',
  method_id: 0,
  chain: 'ethereum',
  network: 'mainnet',
  token: 'USDC',
  decimals: 6,
  expected_subunits: '7250000',
  received_subunits: '0',
  address: '0x000000000000000000000000000000000000dEaD',
  address_index: 0,
  key_fingerprint: 'f',
  status: 'pending',
  metadata: { order_id: 'A-1', reference: 'R-9', secret_note: 'internal' },
  return_url: 'https://shop.example/back',
  expires_at: '2026-01-01T00:15:00.000Z',
  expiry_due_at: null,
  completed_at: null,
  expired_at: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  deposits: [],
  events: [],
  ...over,
});
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const inputs = (over: Partial<CheckoutInputs> = {}): CheckoutInputs => ({
  merchantName: 'Corner Café',
  config: { chains: { ethereum: { mainnet: { rpcUrl: 'https://rpc.example', usdcToken: USDC } } } } as never,
  rate: { base: 'USDC', quote: 'USD', rate: '0.9998', source: 'http', as_of: '2026-01-01T00:04:00.000Z', stale: false },
  now: NOW,
  ...over,
});

describe('checkout view', () => {
  it('open: the whole amount is due, with its wallet URI, an explorer link on a public network, no return link yet', () => {
    const v = checkoutView(session(), inputs());
    expect(v).toMatchObject({
      state: 'open',
      title: 'Pay Corner Café',
      test_mode: false,
      expected: '7.25',
      received: '0',
      due: '7.25',
      pay_uri: `ethereum:${USDC}@1/transfer?address=0x000000000000000000000000000000000000dEaD&uint256=7250000`,
      explorer_url: 'https://etherscan.io/address/0x000000000000000000000000000000000000dEaD',
      order_reference: 'A-1',
      fiat: { amount: '7.25', currency: 'USD', stale: false, price: false },
      return_url: null,
      receipt: false,
    });
    const html = renderCheckout(v, '<svg></svg>');
    expect(html).not.toContain('TEST MODE'); // a live session
    expect(html).not.toContain('internal'); // no other metadata reaches the buyer
    expect(html).toContain('data-state="open"');
  });

  it('partially paid: what is left, and a wallet URI for exactly that', () => {
    const v = checkoutView(
      session({ status: 'partial_paid', received_subunits: '2000000', deposits: [dep({ amount_subunits: '2000000' })] }),
      inputs(),
    );
    expect(v).toMatchObject({ state: 'partially_paid', received: '2', due: '5.25', receipt: true });
    expect(v.pay_uri).toContain('uint256=5250000');
    expect(v.explorer_url).toBe('https://etherscan.io/tx/0xaa');
    expect(renderCheckout(v, '<svg></svg>')).toContain('5.25</span> USDC left to pay.');
  });

  it('paid: nothing to pay, no wallet URI or QR code, the value at completion, the way back', () => {
    const v = checkoutView(
      session({
        status: 'completed',
        received_subunits: '7250000',
        completed_at: '2026-01-01T00:02:00.000Z',
        deposits: [dep({ amount_subunits: '7250000' })],
        completion_rate: { base: 'USDC', quote: 'USD', rate: '1', source: 'static', as_of: '2026-01-01T00:02:00.000Z', stale: true },
      }),
      inputs({ rate: null }),
    );
    expect(v).toMatchObject({ state: 'paid', due: '0', pay_uri: null, return_url: 'https://shop.example/back' });
    expect(v.fiat).toMatchObject({ amount: '7.25', stale: true });
    const html = renderCheckout(v, null);
    expect(html).not.toMatch(/id="(pay|wallet|address)"/);
    expect(html).toContain('Paid. Thank you!');
    expect(html).toContain('may be out of date');
  });

  it('expired, by the scanner or already past the deadline: no wallet URI, the way back', () => {
    for (const s of [session({ status: 'expired' }), session({ expires_at: '2026-01-01T00:04:59.999Z' })]) {
      const v = checkoutView(s, inputs());
      expect(v).toMatchObject({ state: 'expired', pay_uri: null, return_url: 'https://shop.example/back' });
      expect(renderCheckout(v, null)).not.toMatch(/class="qr"|id="wallet"/);
    }
  });

  it('a fiat-priced session shows its own price; a sandbox or demo session is TEST MODE; a local chain has no explorer', () => {
    const priced = checkoutView(
      session({
        sandbox: true,
        network: 'testnet',
        quote: {
          currency: 'EUR',
          amount: '6.70',
          rate: '0.924',
          source: 'http',
          rate_as_of: '2026-01-01T00:00:00.000Z',
          quoted_at: '2026-01-01T00:00:00.000Z',
        },
      }),
      inputs({ config: { chains: { ethereum: { testnet: { rpcUrl: 'http://127.0.0.1:8545', usdcToken: USDC } } } } as never }),
    );
    expect(priced).toMatchObject({ test_mode: true, explorer_url: null, fiat: { amount: '6.70', currency: 'EUR', price: true } });
    const html = renderCheckout(priced, '<svg></svg>');
    expect(html).toContain('TEST MODE');
    expect(html).toContain('Price: 6.70 EUR');
    expect(html).not.toContain('id="explorer"');
    expect(checkoutView(session({ demo: true, sandbox: true }), inputs()).title).toBe('Demo checkout');
    expect(checkoutView(session(), inputs({ rate: null })).fiat).toBeNull();
  });

  it('escapes what the merchant wrote', () => {
    const v = checkoutView(
      session({ metadata: { order_id: '<img src=x onerror=alert(1)>' } }),
      inputs({ merchantName: '"><script>x</script>' }),
    );
    const html = renderCheckout(v, '<svg></svg>');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // the only script is the page's own, allowed by its hash
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(SCRIPT_HASH).toMatch(/^sha256-/);
    expect(renderNotFound('req_1<')).toContain('req_1&lt;');
  });
});

describe('order reference', () => {
  it('is metadata.order_id, else metadata.reference, as text of at most 64 characters', () => {
    expect(orderReference({ order_id: 'A-1', reference: 'R' })).toBe('A-1');
    expect(orderReference({ reference: 'R-2' })).toBe('R-2');
    expect(orderReference({ order_id: 1001 })).toBe('1001');
    expect(orderReference({ order_id: '  ', reference: 'R-3' })).toBe('R-3');
    expect(orderReference({ order_id: { a: 1 } })).toBeNull();
    expect(orderReference({})).toBeNull();
    expect(orderReference({ order_id: 'x'.repeat(100) })).toHaveLength(64);
  });

  it('is on the receipt, with a stale rate flagged', () => {
    const r = receiptData(
      session({
        status: 'completed',
        received_subunits: '7250000',
        completed_at: '2026-01-01T00:02:00.000Z',
        deposits: [dep({ amount_subunits: '7250000' })],
        completion_rate: { base: 'USDC', quote: 'USD', rate: '1', source: 'static', as_of: '2026-01-01T00:02:00.000Z', stale: true },
      }),
      'Shop',
      'http://localhost:8545',
    );
    expect(r.order_reference).toBe('A-1');
    expect(r.fiat?.stale).toBe(true);
    expect(r.qr_url).toBeNull(); // a local chain
    expect(r.deposits[0].explorer_url).toBeNull();
  });
});

describe('return_url', () => {
  it('is https, or http too under WEBHOOK_ALLOW_PRIVATE; never another scheme or credentials', () => {
    expect(checkReturnUrl('https://shop.example/a?b=1', false)).toBe('https://shop.example/a?b=1');
    expect(checkReturnUrl('http://localhost:4242/done', true)).toBe('http://localhost:4242/done');
    for (const [url, allowHttp, message] of [
      ['http://shop.example/a', false, 'return_url must use https'],
      ['javascript:alert(1)', true, 'return_url must use https'],
      ['data:text/html,x', true, 'return_url must use https'],
      ['https://user:pw@shop.example/', false, 'return_url must not contain credentials'],
      ['/relative', false, 'return_url is not an absolute URL'],
    ] as const) {
      let err: unknown;
      try {
        checkReturnUrl(url, allowHttp);
      } catch (e) {
        err = e;
      }
      expect(toEnvelope(err, 'req_x').body).toMatchObject({ code: 3, message, field: 'return_url' });
      expect(toEnvelope(err, 'req_x').body.remediation).toMatch(/https/);
    }
    let refused: unknown;
    try {
      checkReturnUrl('http://shop.example/a', false);
    } catch (e) {
      refused = e;
    }
    expect(toEnvelope(refused, 'req_x').body.remediation).toContain('WEBHOOK_ALLOW_PRIVATE=1');
  });
});
