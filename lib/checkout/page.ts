/**
 * The hosted checkout page behind a session's payment_url: amount, address, QR code, a wallet link and
 * live status. Server-rendered; one small inline script (allowed by its CSP hash) polls the status.
 */
import { createHash } from 'node:crypto';

export interface CheckoutView {
  session_id: string;
  title: string;
  status: string;
  expected_amount: string;
  received_amount: string;
  currency: string;
  chain: string;
  network: string;
  address: string;
  qr_data: string;
  qr_svg: string;
  explorer_url: string;
  expires_at: string;
  demo: boolean;
  /** money has arrived: the buyer's PDF receipt is offered (GET /checkout/{session_id}/receipt) */
  paid: boolean;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const STATUS_TEXT: Record<string, string> = {
  pending: 'Waiting for payment',
  partial_paid: 'Partly paid: send the rest',
  completed: 'Paid. Thank you!',
  expired: 'This checkout has expired',
};

const CHAIN_NAMES: Record<string, string> = { ethereum: 'Ethereum', solana: 'Solana' };

// Polls the status every 2 s while the session is open; updates status, amounts and the explorer link.
const SCRIPT = `(() => {
  const root = document.getElementById('checkout');
  const texts = JSON.parse(root.dataset.texts);
  const set = (id, v) => { const el = document.getElementById(id); if (el) el.textContent = v; };
  const tick = () => {
    const left = Math.max(0, Date.parse(root.dataset.expires) - Date.now());
    const m = Math.floor(left / 60000), s = Math.floor((left % 60000) / 1000);
    set('countdown', root.dataset.status === 'pending' || root.dataset.status === 'partial_paid' ? ' · ' + m + ':' + String(s).padStart(2, '0') + ' left' : '');
  };
  const poll = async () => {
    try {
      const res = await fetch(location.pathname.replace(/\\/$/, '') + '/status', { cache: 'no-store' });
      if (res.ok) {
        const st = await res.json();
        root.dataset.status = st.status;
        set('status', texts[st.status] || st.status);
        set('received', st.received_amount + ' ' + st.currency);
        document.getElementById('explorer').href = st.explorer_url;
        if (Number(st.received_amount) > 0) document.getElementById('receipt-row').hidden = false;
        if (st.status === 'completed' || st.status === 'expired') { tick(); return; }
      }
    } catch (e) { /* offline: try again */ }
    setTimeout(poll, 2000);
  };
  tick(); setInterval(tick, 1000); setTimeout(poll, 2000);
})();`;

export const SCRIPT_HASH = `sha256-${createHash('sha256').update(SCRIPT).digest('base64')}`;

/** Headers that keep the page from being framed, sniffed or leaking its URL (a capability). */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': `default-src 'none'; script-src '${SCRIPT_HASH}'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

export function renderCheckout(v: CheckoutView): string {
  const network = `${CHAIN_NAMES[v.chain] ?? v.chain} ${v.network}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(v.title)}</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; color: #1d2433; }
  main { max-width: 420px; margin: 32px auto; background: #fff; border-radius: 12px; padding: 24px; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 18px; margin: 0 0 4px; }
  .amount { font-size: 28px; font-weight: 700; margin: 12px 0 0; }
  .net { color: #5b6478; font-size: 14px; }
  .qr { display: flex; justify-content: center; margin: 16px 0; }
  .qr svg { width: 220px; height: 220px; }
  .address { font-family: ui-monospace, monospace; font-size: 13px; word-break: break-all; background: #f4f5f7; padding: 8px; border-radius: 6px; }
  .status { margin-top: 16px; padding: 10px; border-radius: 6px; background: #eef3ff; font-weight: 600; }
  [data-status="completed"] .status { background: #e6f6ec; color: #17663a; }
  [data-status="expired"] .status { background: #fdecec; color: #8a1c1c; }
  a.button { display: block; text-align: center; margin-top: 12px; padding: 10px; border-radius: 6px; background: #1d4ed8; color: #fff; text-decoration: none; }
  .small { font-size: 13px; color: #5b6478; margin-top: 8px; }
  .demo { background: #fff7d6; padding: 6px 8px; border-radius: 6px; font-size: 13px; margin-bottom: 12px; }
</style>
</head>
<body>
<main id="checkout" data-status="${esc(v.status)}" data-expires="${esc(v.expires_at)}" data-texts="${esc(JSON.stringify(STATUS_TEXT))}">
  ${v.demo ? '<div class="demo">Demo checkout on a test network: no real money moves.</div>' : ''}
  <h1>${esc(v.title)}</h1>
  <div class="amount"><span id="expected">${esc(v.expected_amount)}</span> ${esc(v.currency)}</div>
  <div class="net">on ${esc(network)}</div>
  <div class="qr" aria-label="payment QR code">${v.qr_svg}</div>
  <div class="small">Send exactly this amount of ${esc(v.currency)} on ${esc(network)} to:</div>
  <div class="address" id="address">${esc(v.address)}</div>
  <a class="button" id="wallet" href="${esc(v.qr_data)}">Open in wallet</a>
  <div class="status" id="status" role="status">${esc(STATUS_TEXT[v.status] ?? v.status)}</div>
  <div class="small">Received: <span id="received">${esc(v.received_amount)} ${esc(v.currency)}</span><span id="countdown"></span></div>
  <div class="small"><a id="explorer" href="${esc(v.explorer_url)}" rel="noopener noreferrer" target="_blank">View on explorer</a></div>
  <div class="small" id="receipt-row"${v.paid ? '' : ' hidden'}><a id="receipt" href="/checkout/${esc(encodeURIComponent(v.session_id))}/receipt" rel="noopener noreferrer" target="_blank">Download receipt (PDF)</a></div>
</main>
<script>${SCRIPT}</script>
</body>
</html>`;
}
