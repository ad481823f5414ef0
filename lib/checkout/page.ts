/**
 * The hosted checkout page behind a session's payment_url, server-rendered for its state (./view.ts), and
 * the page an unknown checkout link gets. Nothing external: styles and one small script are inline (the
 * script is allowed by its CSP hash), the QR code is inline SVG. The script keeps the page live: it polls
 * the status and, when the session moves, fetches this page again and swaps it in (one renderer, here);
 * the payment part is removed at once when the session ends or its countdown runs out, so no QR code or
 * wallet link survives a paid or expired session, reload or not. Copy buttons use the clipboard API, with
 * a selection fallback.
 */
import { createHash } from 'node:crypto';
import type { CheckoutView } from './view.ts';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const STATUS_TEXT: Record<CheckoutView['state'], string> = {
  open: 'Waiting for payment',
  partially_paid: 'Partly paid: send the rest',
  paid: 'Paid. Thank you!',
  expired: 'This checkout has expired',
};

const CHAIN_NAMES: Record<string, string> = { ethereum: 'Ethereum', solana: 'Solana' };

// Polls /status every 2 s while the session is open; on a change, re-renders from the server. Ticks the
// countdown; at zero the payment part goes at once (the server's expiry follows). Copy buttons.
const SCRIPT = `(() => {
  const root = () => document.getElementById('checkout');
  const set = (id, v) => { const el = document.getElementById(id); if (el) el.textContent = v; };
  const open = () => { const s = root().dataset.state; return s === 'open' || s === 'partially_paid'; };
  const endPayment = (state, text) => {
    const r = root();
    r.dataset.state = state;
    const pay = document.getElementById('pay');
    if (pay) pay.remove();
    set('status', text);
  };
  const tick = () => {
    if (!open()) return;
    const left = Date.parse(root().dataset.expires) - Date.now();
    if (left <= 0) { endPayment('expired', ${JSON.stringify(STATUS_TEXT.expired)}); refresh(); return; }
    const m = Math.floor(left / 60000), s = Math.floor((left % 60000) / 1000);
    set('countdown', m + ':' + String(s).padStart(2, '0') + ' left to pay');
  };
  let refreshing = false;
  async function refresh() {
    if (refreshing) return;
    refreshing = true;
    try {
      const res = await fetch(location.pathname, { headers: { Accept: 'text/html' }, cache: 'no-store' });
      const next = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('checkout');
      if (res.ok && next) { root().replaceWith(next); document.title = next.dataset.title || document.title; }
    } catch (e) { /* offline: the next poll tries again */ }
    refreshing = false;
  }
  const poll = async () => {
    try {
      const res = await fetch(location.pathname.replace(/\\/$/, '') + '/status', { cache: 'no-store' });
      if (res.ok) {
        const st = await res.json();
        const r = root();
        if (st.status !== r.dataset.status || st.received_amount_subunits !== r.dataset.received) {
          if (st.status === 'completed') endPayment('paid', ${JSON.stringify(STATUS_TEXT.paid)});
          if (st.status === 'expired') endPayment('expired', ${JSON.stringify(STATUS_TEXT.expired)});
          await refresh();
        }
      }
    } catch (e) { /* offline: try again */ }
    if (open()) setTimeout(poll, 2000);
  };
  const copied = (btn) => {
    set('copied', btn.dataset.label + ' copied');
    btn.textContent = 'Copied';
    setTimeout(() => { btn.textContent = 'Copy'; set('copied', ''); }, 2000);
  };
  document.addEventListener('click', (ev) => {
    const btn = ev.target.closest && ev.target.closest('button[data-copy]');
    if (!btn) return;
    const el = document.getElementById(btn.dataset.copy);
    const text = el ? el.textContent.trim() : '';
    const fallback = () => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const sel = getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      if (document.execCommand('copy')) copied(btn);
      else set('copied', 'Select the text and copy it');
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(() => copied(btn), fallback);
    else fallback();
  });
  tick(); setInterval(tick, 1000); if (open()) setTimeout(poll, 2000);
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

const STYLE = `
  :root { color-scheme: light; }
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f4f5f7; margin: 0; color: #1d2433; line-height: 1.4; }
  main { max-width: 440px; margin: 24px auto; background: #fff; border-radius: 12px; padding: 24px; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 20px; margin: 0 0 4px; }
  p { margin: 8px 0; }
  .test-mode { background: #ffd43b; color: #3d2c00; font-weight: 700; letter-spacing: .04em; text-align: center; padding: 8px; border-radius: 6px; margin: 0 0 16px; }
  .order { color: #4a5366; font-size: 14px; margin: 0; }
  .amount { font-size: 30px; font-weight: 700; margin: 16px 0 0; }
  .fiat { color: #4a5366; font-size: 15px; margin: 2px 0 0; }
  .stale { color: #8a4b00; font-size: 13px; }
  .net { color: #4a5366; font-size: 14px; margin: 2px 0 0; }
  .status { margin-top: 16px; padding: 12px; border-radius: 6px; background: #eef3ff; font-weight: 700; }
  [data-state="partially_paid"] .status { background: #fff4e0; color: #6b3d00; }
  [data-state="paid"] .status { background: #e6f6ec; color: #135c33; font-size: 20px; }
  [data-state="expired"] .status { background: #fdecec; color: #7f1919; font-size: 20px; }
  .left { font-size: 16px; }
  .qr { display: flex; justify-content: center; margin: 16px 0 8px; }
  .qr svg { width: 220px; height: 220px; }
  .copyrow { display: flex; align-items: center; gap: 8px; margin: 6px 0; }
  .copyrow .label { width: 64px; flex: none; color: #4a5366; font-size: 13px; }
  code { font-family: ui-monospace, "SFMono-Regular", monospace; font-size: 13px; word-break: break-all; background: #f4f5f7; padding: 6px 8px; border-radius: 6px; flex: 1; }
  button { font: inherit; font-size: 13px; padding: 6px 10px; border: 1px solid #1d4ed8; border-radius: 6px; background: #fff; color: #1d4ed8; cursor: pointer; flex: none; }
  a.button { display: block; text-align: center; margin-top: 12px; padding: 12px; border-radius: 6px; background: #1d4ed8; color: #fff; text-decoration: none; font-weight: 600; }
  a.secondary { background: #fff; color: #1d4ed8; border: 1px solid #1d4ed8; }
  a:focus-visible, button:focus-visible { outline: 3px solid #f59f00; outline-offset: 2px; }
  .small { font-size: 13px; color: #4a5366; margin-top: 8px; }
  .small a { color: #1d4ed8; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

function page(title: string, body: string, script: boolean): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
${script ? `<script>${SCRIPT}</script>` : ''}
</body>
</html>`;
}

function fiatLine(v: CheckoutView): string {
  const f = v.fiat;
  if (!f) return '';
  const what = v.state === 'paid' && !f.price ? 'Value when paid' : f.price ? 'Price' : 'About';
  const stale = f.stale
    ? ` <span class="stale" id="fiat-stale">(rate from ${esc(f.as_of!.slice(0, 16).replace('T', ' '))} UTC, may be out of date)</span>`
    : '';
  return `<p class="fiat" id="fiat">${what}: ${f.price ? '' : '≈ '}${esc(f.amount)} ${esc(f.currency)}${stale}</p>`;
}

/** The payment part: only while something is still due (open, partially paid). */
function payment(v: CheckoutView, network: string, qrSvg: string): string {
  return `<section id="pay" aria-label="How to pay">
    <div class="qr" role="img" aria-label="QR code to pay ${esc(v.due)} ${esc(v.token)} on ${esc(network)}">${qrSvg}</div>
    <p>Send exactly <strong>${esc(v.due)} ${esc(v.token)}</strong> on ${esc(network)} to this address:</p>
    <div class="copyrow"><span class="label">Address</span><code id="address">${esc(v.address)}</code><button type="button" data-copy="address" data-label="Address" aria-label="Copy address">Copy</button></div>
    <div class="copyrow"><span class="label">Amount</span><code id="due">${esc(v.due)}</code><button type="button" data-copy="due" data-label="Amount" aria-label="Copy amount">Copy</button></div>
    <a class="button" id="wallet" href="${esc(v.pay_uri!)}">Open in wallet</a>
    <p class="small" id="countdown" aria-live="off"></p>
  </section>`;
}

/** The page of a session; `qrSvg` is the QR code of `v.pay_uri` (needed while something is due). */
export function renderCheckout(v: CheckoutView, qrSvg: string | null): string {
  const network = `${CHAIN_NAMES[v.chain] ?? v.chain} ${v.network}`;
  const parts: string[] = [];
  if (v.test_mode)
    parts.push(
      `<p class="test-mode" id="test-mode" role="note">TEST MODE${v.demo ? ' · demo' : ''}: a test network, no real money moves</p>`,
    );
  parts.push(`<h1>${esc(v.title)}</h1>`);
  if (v.order_reference) parts.push(`<p class="order">Order <span id="order-ref">${esc(v.order_reference)}</span></p>`);
  parts.push(`<p class="amount"><span id="expected">${esc(v.expected)}</span> ${esc(v.token)}</p>`);
  parts.push(fiatLine(v));
  parts.push(`<p class="net">on ${esc(network)}</p>`);
  parts.push(`<p class="status" id="status" role="status" aria-live="polite">${esc(STATUS_TEXT[v.state])}</p>`);
  if (v.state === 'partially_paid')
    parts.push(
      `<p class="left" id="left">Received <span id="received">${esc(v.received)}</span> ${esc(v.token)}. <strong><span id="left-amount">${esc(v.due)}</span> ${esc(v.token)} left to pay.</strong></p>`,
    );
  if (v.state === 'paid')
    parts.push(
      `<p class="left" id="paid">Paid in full: <span id="received">${esc(v.received)}</span> ${esc(v.token)} received. You can close this page.</p>`,
    );
  if (v.state === 'expired')
    parts.push(
      `<p class="left" id="expired">No payment can be made here any more${v.receipt ? `; <span id="received">${esc(v.received)}</span> ${esc(v.token)} was received` : ''}. Ask the shop for a new payment link if you still want to pay.</p>`,
    );
  if (v.pay_uri && qrSvg) parts.push(payment(v, network, qrSvg));
  if (v.return_url) parts.push(`<a class="button secondary" id="return" href="${esc(v.return_url)}">Back to the shop</a>`);
  const links: string[] = [];
  if (v.receipt)
    links.push(
      `<a id="receipt" href="/checkout/${esc(encodeURIComponent(v.session_id))}/receipt" rel="noopener noreferrer" target="_blank">Download receipt (PDF)</a>`,
    );
  if (v.explorer_url)
    links.push(`<a id="explorer" href="${esc(v.explorer_url)}" rel="noopener noreferrer" target="_blank">View on a block explorer</a>`);
  if (links.length) parts.push(`<p class="small">${links.join(' · ')}</p>`);
  parts.push('<p class="visually-hidden" id="copied" role="status" aria-live="polite"></p>');
  const body = `<main id="checkout" data-state="${v.state}" data-status="${esc(v.status)}" data-received="${esc(v.received_subunits)}" data-expires="${esc(v.expires_at)}" data-title="${esc(v.title)}">
  ${parts.filter(Boolean).join('\n  ')}
</main>`;
  return page(v.title, body, true);
}

/** What a browser gets for a checkout link that names no session. */
export function renderNotFound(requestId: string): string {
  const body = `<main id="not-found">
  <h1>Checkout not found</h1>
  <p>This payment link is not valid. Check that it was copied in full, or ask the shop for a new one.</p>
  <p class="small">Reference for support: <code id="request-id">${esc(requestId)}</code></p>
</main>`;
  return page('Checkout not found', body, false);
}
