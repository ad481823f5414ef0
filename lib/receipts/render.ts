/**
 * Renders a receipt to PDF bytes with pdfkit. CPU-bound (tens of milliseconds): callers run it in the
 * piscina pool (workers/render-receipt.ts), never on the event loop. Reproducible: the document's info
 * (and so its /ID, which pdfkit hashes from the info) is fixed by the receipt, nothing reads the clock,
 * and only the built-in Helvetica and Courier fonts are used (nothing embedded, nothing random).
 */
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { ReceiptData } from './model.ts';

const CHAIN_NAMES: Record<string, string> = { ethereum: 'Ethereum', solana: 'Solana' };
const MARGIN = 50;

/** The QR code of `text` drawn as vector squares (no image, no randomness). */
function drawQr(doc: PDFKit.PDFDocument, text: string, x: number, y: number, size: number): void {
  const qr = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const n = qr.modules.size;
  const cell = size / (n + 2);
  doc.save();
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      if (qr.modules.data[r * n + c]) doc.rect(x + (c + 1) * cell, y + (r + 1) * cell, cell, cell);
    }
  }
  doc.fill('#000000').restore();
}

/** One line of monospace text, shrunk to fit the width (hashes and links are never wrapped). */
function fitLine(doc: PDFKit.PDFDocument, text: string, maxSize: number, width: number, color = '#000000'): number {
  doc.font('Courier').fontSize(maxSize);
  const size = Math.min(maxSize, Math.floor((maxSize * width * 100) / doc.widthOfString(text)) / 100);
  doc
    .fontSize(size)
    .fillColor(color)
    .text(text, MARGIN, doc.y, { width: width + 1 })
    .fillColor('#000000');
  return size;
}

export function renderReceipt(r: ReceiptData): Promise<Buffer> {
  const issued = new Date(r.issued_iso);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    compress: true,
    info: {
      Title: `Receipt ${r.session_id}`,
      Author: r.merchant_name,
      Subject: `Payment receipt for session ${r.session_id}`,
      Producer: 'Stablecoin Payment Service',
      Creator: 'Stablecoin Payment Service',
      CreationDate: issued,
      ModDate: issued,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const width = doc.page.width - 2 * MARGIN;
  const row = (label: string, value: string) => {
    doc.font('Helvetica-Bold').fontSize(10).text(`${label}: `, { continued: true }).font('Helvetica').text(value);
  };

  doc.font('Helvetica-Bold').fontSize(20).text('Payment receipt');
  doc.font('Helvetica').fontSize(12).text(r.merchant_name);
  doc.moveDown();
  const qrSize = 110;
  // a local development chain has no public explorer: no QR code rather than a link to the wrong network
  if (r.qr_url) drawQr(doc, r.qr_url, MARGIN + width - qrSize, MARGIN, qrSize);

  row('Session', r.session_id);
  if (r.order_reference) row('Order', r.order_reference);
  row('Status', r.status);
  row('Token', r.token);
  row('Chain', CHAIN_NAMES[r.chain] ?? r.chain);
  row('Network', r.network);
  row('Expected amount', `${r.expected_amount} ${r.token}`);
  row('Received amount', `${r.received_amount} ${r.token}`);
  if (r.refunds.length) row('Refunded amount', `${r.refunded_amount} ${r.token}`);
  if (r.fiat) {
    row(`Value at completion (${r.fiat.quote})`, `${r.fiat.value} ${r.fiat.quote}${r.fiat.stale ? ' (stale rate)' : ''}`);
    row(
      'Rate',
      `1 ${r.token} = ${r.fiat.rate} ${r.fiat.quote} (source ${r.fiat.source}, as of ${r.fiat.as_of}${r.fiat.stale ? '; older than RATES_MAX_AGE' : ''})`,
    );
  }
  row('Created', r.created_at);
  if (r.completed_at) row('Completed', r.completed_at);
  row('Issued', r.issued_at);
  for (const mark of r.marks) doc.font('Helvetica-Bold').fontSize(11).fillColor('#a11d1d').text(mark).fillColor('#000000');

  doc.moveDown();
  doc.font('Helvetica-Bold').fontSize(13).text(`Deposits (${r.deposits.length})`, MARGIN);
  r.deposits.forEach((d, i) => {
    doc.moveDown(0.5);
    const flags = [d.late ? 'LATE' : '', d.simulated ? 'SIMULATED' : ''].filter(Boolean).join(', ');
    doc
      .font('Helvetica-Bold')
      .fontSize(10)
      .text(`${i + 1}. ${d.amount} ${r.token}${flags ? ` [${flags}]` : ''}`);
    doc.font('Helvetica').fontSize(9).text(`Detected ${d.detected_at}, credited ${d.credited_at}`);
    if (d.tx_hash) {
      fitLine(doc, `Tx ${d.tx_hash}`, 8, width);
      if (d.explorer_url) {
        const y = doc.y;
        const size = fitLine(doc, d.explorer_url, 8, width, '#1d4ed8');
        doc.link(MARGIN, y, doc.fontSize(size).widthOfString(d.explorer_url), doc.currentLineHeight(), d.explorer_url);
      }
    } else {
      doc.font('Helvetica-Oblique').fontSize(9).text('Sandbox simulation: no chain transaction');
    }
  });

  if (r.refunds.length) {
    doc.moveDown();
    doc.font('Helvetica-Bold').fontSize(13).text(`Refunds (${r.refunds.length})`, MARGIN);
    r.refunds.forEach((x, i) => {
      doc.moveDown(0.5);
      doc
        .font('Helvetica-Bold')
        .fontSize(10)
        .text(`${i + 1}. ${x.amount} ${r.token} ${x.status}${x.simulated ? ' [SIMULATED]' : ''}`);
      doc
        .font('Helvetica')
        .fontSize(9)
        .text(`Refund ${x.id}, requested ${x.created_at}${x.completed_at ? `, completed ${x.completed_at}` : ''}`);
      if (x.destination) fitLine(doc, `To ${x.destination}`, 8, width);
      if (x.tx_hash) {
        fitLine(doc, `Tx ${x.tx_hash}`, 8, width);
        if (x.explorer_url) {
          const y = doc.y;
          const size = fitLine(doc, x.explorer_url, 8, width, '#1d4ed8');
          doc.link(MARGIN, y, doc.fontSize(size).widthOfString(x.explorer_url), doc.currentLineHeight(), x.explorer_url);
        }
      }
    });
  }

  doc.moveDown();
  doc
    .font('Helvetica')
    .fontSize(8)
    .fillColor('#5b6478')
    .text(r.qr_url ? `The QR code links to ${r.qr_url}` : 'A local development chain: no public explorer link.', MARGIN, undefined, {
      width,
    })
    .text('Amounts are exact in token units. Times are UTC.', { width });
  doc.end();
  return done;
}
